/* EVENTS chunk payloads: 32-byte slots, each an event or the head of a
 * descriptor definition followed by its continuation slots. */
#include <stddef.h>
#include <string.h>

#include "reader_internal.h"

/* Define the descriptor whose head slot is at index i; returns the number of
 * slots it occupies, or 0 when the rest of the chunk cannot be parsed. */
static size_t define_desc(tsr_file *f, const tsc_chunk_header *h, uint64_t slot_off,
                          const uint8_t *slot, size_t slots_left)
{
    tsc_desc_head head;
    memcpy(&head, slot, sizeof head);
    size_t need = 1;
    if (head.payload_len > TSC_DESC_HEAD_PAYLOAD)
        need += (head.payload_len - TSC_DESC_HEAD_PAYLOAD + TSC_SLOT_SIZE - 1) / TSC_SLOT_SIZE;
    if (need > slots_left) {
        f->stats.bad_descs++;
        tsr_problem(f, slot_off,
                    "descriptor id %u: payload of %u bytes runs past the end of the chunk; "
                    "rest of chunk skipped", head.id, head.payload_len);
        return 0;
    }
    const char *tname = tsr_desc_type_name(head.type);
    if (head.payload_len > TSC_DESC_MAX_PAYLOAD) {
        f->stats.bad_descs++;
        tsr_problem(f, slot_off, "descriptor id %u: payload length %u exceeds the limit of %u",
                    head.id, head.payload_len, TSC_DESC_MAX_PAYLOAD);
        return need;
    }
    if (head.id == 0) {
        f->stats.bad_descs++;
        tsr_problem(f, slot_off, "descriptor with id 0 ignored");
        return need;
    }
    size_t min = tsr_desc_min_len(head.type);
    /* Continuation slots follow the head contiguously, so the payload is
     * one run of bytes starting after the 8-byte head fields. */
    const uint8_t *payload = slot + offsetof(tsc_desc_head, payload);
    if (head.payload_len < min) {
        f->stats.bad_descs++;
        tsr_problem(f, slot_off, "descriptor id %u (%s): payload %u bytes, expected at least %zu",
                    head.id, tname ? tname : "?", head.payload_len, min);
        return need;
    }
    if (head.type == TSC_DESC_THREAD) {
        tsc_desc_thread t;
        memcpy(&t, payload, sizeof t);
        if (t.name_len > head.payload_len - sizeof t) {
            f->stats.bad_descs++;
            tsr_problem(f, slot_off, "descriptor id %u (thread): name length %u exceeds payload",
                        head.id, t.name_len);
            return need;
        }
    }
    const tsr_desc *old = tsr_desc_lookup(f, head.id);
    if (old) {
        /* Identical redefinition is harmless; a different one is kept out. */
        if (old->type != head.type || old->len != head.payload_len ||
            memcmp(old->payload, payload, old->len) != 0) {
            f->stats.bad_descs++;
            tsr_problem(f, slot_off,
                        "descriptor id %u redefined differently; keeping the definition at "
                        "offset %llu", head.id, (unsigned long long)old->offset);
        }
        return need;
    }
    tsr_desc d = {.id = head.id, .type = head.type, .len = head.payload_len, .tid = h->tid,
                  .offset = slot_off, .payload = payload};
    const tsr_desc *stored = tsr_desc_add(f, &d);
    if (!stored) {
        tsr_problem(f, slot_off, "out of memory storing descriptor id %u", head.id);
        return need;
    }
    f->stats.descs++;
    f->stats.descs_by_type[head.type]++;
    if (f->cb.on_desc)
        f->cb.on_desc(f->ctx, f, stored);
    return need;
}

static void deliver_event(tsr_file *f, const tsc_chunk_header *h, uint64_t slot_off,
                          const uint8_t *slot)
{
    /* Field by field from the slot: copying the whole slot into a struct
     * and reading fields back stalls on store forwarding. */
    tsc_event ev;
    ev.kind = slot[offsetof(tsc_event, kind)];
    ev.flags = slot[offsetof(tsc_event, flags)];
    memcpy(&ev.aux, slot + offsetof(tsc_event, aux), sizeof ev.aux);
    memcpy(&ev.desc, slot + offsetof(tsc_event, desc), sizeof ev.desc);
    memcpy(&ev.start_ns, slot + offsetof(tsc_event, start_ns), sizeof ev.start_ns);
    memcpy(&ev.end_ns, slot + offsetof(tsc_event, end_ns), sizeof ev.end_ns);
    memcpy(&ev.val, slot + offsetof(tsc_event, val), sizeof ev.val);
    const char *kname = tsr_event_kind_name(ev.kind);
    if (!kname) {
        f->stats.unknown_events++;
        /* Newer minors may add kinds; in our own minor it is garbage. */
        if (!f->unknown_kind_seen[ev.kind] && f->hdr.version_minor <= TSC_FORMAT_MINOR)
            tsr_problem(f, slot_off, "unknown event kind 0x%02x skipped (further ones counted)",
                        ev.kind);
        f->unknown_kind_seen[ev.kind] = 1;
        return;
    }
    tsr_event e = {.kind = ev.kind, .flags = ev.flags, .aux = ev.aux, .desc_id = ev.desc,
                   .start_ns = ev.start_ns, .end_ns = ev.end_ns, .val = ev.val,
                   .tid = h->tid, .chunk_seq = h->seq, .offset = slot_off, .desc = NULL};
    uint8_t want = tsr_desc_type_for_kind(ev.kind);
    if (want) {
        const tsr_desc *d = tsr_desc_lookup(f, ev.desc);
        if (!d) {
            f->stats.undefined_refs++;
            tsr_problem(f, slot_off, "%s event refers to undefined descriptor id %u", kname,
                        ev.desc);
        } else if (d->type != want) {
            f->stats.undefined_refs++;
            const char *dn = tsr_desc_type_name(d->type);
            tsr_problem(f, slot_off, "%s event refers to descriptor id %u of type %s, not %s",
                        kname, ev.desc, dn ? dn : "unknown", tsr_desc_type_name(want));
        } else {
            e.desc = d;
        }
    }
    f->stats.events++;
    f->stats.events_by_kind[ev.kind]++;
    if (f->cb.on_event)
        f->cb.on_event(f->ctx, f, &e);
}

void tsr_parse_events(tsr_file *f, const tsc_chunk_header *h, uint64_t poff,
                      const uint8_t *payload)
{
    size_t n = h->payload_len / TSC_SLOT_SIZE;
    if (h->payload_len % TSC_SLOT_SIZE)
        tsr_problem(f, poff, "EVENTS payload of %u bytes is not a multiple of %u; "
                    "last %u bytes ignored", h->payload_len, TSC_SLOT_SIZE,
                    h->payload_len % TSC_SLOT_SIZE);
    size_t i = 0;
    while (i < n) {
        const uint8_t *slot = payload + i * TSC_SLOT_SIZE;
        uint64_t slot_off = poff + (uint64_t)i * TSC_SLOT_SIZE;
        if (slot[0] == TSC_EV_DESC) {
            size_t used = define_desc(f, h, slot_off, slot, n - i);
            if (!used)
                return;
            i += used;
        } else {
            deliver_event(f, h, slot_off, slot);
            i++;
        }
    }
}
