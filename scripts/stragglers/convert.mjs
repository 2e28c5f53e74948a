// Converts the published traces of the straggler what-if study (one
// parquet table of operations per job: dp_rank, stage, rank, step, optype,
// start_ts, duration, seq_id, ...) into torch.profiler (Kineto) traces,
// one gzipped file per traced worker, that tscope-report reads.
//
//   npm install                                     (once, in this folder: package.json)
//   node convert.mjs TRACE.parquet META.yaml OUTDIR [--steps N]
//
// Every operation keeps its start and duration.  The study gives times
// relative to the start of each (sampled) step, so the steps are laid one
// after the other with a 1 ms gap; each gets a ProfilerStep#<step> range.
// Compute operations become kernels named after their operation type on
// stream 7 (backward ones launched from a pt_autograd_0 thread, as PyTorch
// does); the data-parallel and synchronising collectives are NCCL kernels
// on the same stream (the study orders them with the compute); each kind
// of pipeline send/receive gets its own stream.  NCCL kernels have their
// record_param_comms CPU op with the communicator, group ranks, sequence
// number and, for send/recv, the peer (Dst Rank / Src Rank).
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'
import fs from 'fs'
import zlib from 'zlib'
import path from 'path'

const [tracePath, metaPath, outDir, ...rest] = process.argv.slice(2)
if (!outDir) {
  console.error('usage: node convert.mjs TRACE.parquet META.yaml OUTDIR [--steps N]')
  process.exit(2)
}
const maxSteps = rest[0] === '--steps' ? Number(rest[1]) : Infinity
const meta = Object.fromEntries(fs.readFileSync(metaPath, 'utf8').split('\n')
  .filter(l => l.includes(':')).map(l => l.split(':').map(s => s.trim()))
  .map(([k, v]) => [k, /^\d+$/.test(v) ? Number(v) : v]))

const file = await asyncBufferFromFile(tracePath)
const rows = await parquetReadObjects({ file, compressors })
for (const r of rows) for (const k of Object.keys(r)) if (typeof r[k] === 'bigint') r[k] = Number(r[k])

const steps = [...new Set(rows.map(r => r.step))].sort((a, b) => a - b).slice(0, maxSteps)
const keep = new Set(steps)
const ops = rows.filter(r => keep.has(r.step))
const pp = meta.pp_size
// step offsets: back to back, 1 ms apart (seconds)
const stepLen = new Map()
for (const r of ops) stepLen.set(r.step, Math.max(stepLen.get(r.step) ?? 0, r.start_ts + r.duration))
const offset = new Map()
let at = 0
for (const s of steps) { offset.set(s, at); at += stepLen.get(s) + 1e-3 }

// traced workers: global rank -> {dp, stage}
const workers = new Map()
for (const r of ops) workers.set(r.rank, { dp: r.dp_rank, stage: r.stage })
const rankOf = (dp, stage) => [...workers].find(([, w]) => w.dp === dp && w.stage === stage)?.[0]
const list = f => `[${[...workers].filter(([, w]) => f(w)).map(([g]) => g).sort((a, b) => a - b).join(', ')}]`

const P2P = { 'forward-send': ['send', 1, 21], 'forward-recv': ['recv', -1, 22],
  'backward-send': ['send', -1, 23], 'backward-recv': ['recv', 1, 24] }
const COLL = {
  'params-all-gather': ['allgather', 'AllGather_RING_LL', w => `dp_stage${w.stage}`,
    w => list(x => x.stage === w.stage), () => meta.dp_size * meta.dsp_size],
  'grads-reduce-scatter': ['reduce_scatter', 'ReduceScatter_Sum_bf16_RING_LL', w => `dp_stage${w.stage}`,
    w => list(x => x.stage === w.stage), () => meta.dp_size * meta.dsp_size],
  'embedding-grads-all-reduce': ['allreduce', 'AllReduce_Sum_f32_RING_LL', w => `embedding_dp${w.dp}`,
    w => list(x => x.dp === w.dp && (x.stage === 0 || x.stage === pp - 1)), () => 2],
  'optimizer-clip-main-grad': ['allreduce', 'AllReduce_Sum_f32_RING_LL', () => 'world',
    () => list(() => true), () => meta.world_size],
  'layernorm-grads-all-reduce': ['allreduce', 'AllReduce_Sum_f32_RING_LL', (w, g) => `tp_${g}`,
    (w, g) => `[${g}]`, () => meta.tp_size],
}
const BASE_NS = 1700000000000000000n
const us = s => Number((s * 1e6).toFixed(3))

fs.mkdirSync(outDir, { recursive: true })
for (const [grank, w] of [...workers].sort((a, b) => a[0] - b[0])) {
  const mine = ops.filter(r => r.rank === grank)
  mine.sort((a, b) => (offset.get(a.step) + a.start_ts) - (offset.get(b.step) + b.start_ts) || a.seq_id - b.seq_id)
  const ev = []
  const pid = 1000 + grank
  const threads = { main: 100, autograd: 101, 21: 121, 22: 122, 23: 123, 24: 124 }
  ev.push({ ph: 'M', name: 'process_name', pid, args: { name: `rank ${grank}` } })
  for (const [n, t] of [['python', 100], ['pt_autograd_0', 101], ['p2p fwd-send', 121],
    ['p2p fwd-recv', 122], ['p2p bwd-send', 123], ['p2p bwd-recv', 124]])
    ev.push({ ph: 'M', name: 'thread_name', pid, tid: t, args: { name: n } })
  for (const s of steps)
    ev.push({ ph: 'X', cat: 'user_annotation', name: `ProfilerStep#${s}`, pid, tid: 100,
      ts: us(offset.get(s)), dur: us(stepLen.get(s) + 0.5e-3) })
  const seq = new Map()
  let corr = 1
  for (const r of mine) {
    const t0 = offset.get(r.step) + r.start_ts
    const p2p = P2P[r.optype], coll = COLL[r.optype]
    const stream = p2p ? p2p[2] : 7
    const tid = p2p ? threads[stream] : r.optype.startsWith('backward') ? 101 : 100
    const launch = us(t0) - 30
    const c = corr++
    let kname = r.optype
    if (p2p || coll) {
      let group, ranks, size, name, extra = {}
      if (p2p) {
        const peerStage = w.stage + p2p[1]
        const peer = rankOf(w.dp, peerStage)
        group = `pp_dp${w.dp}`; ranks = list(x => x.dp === w.dp); size = pp; name = p2p[0]
        extra = p2p[0] === 'send' ? { 'Dst Rank': peer } : { 'Src Rank': peer }
        kname = 'ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)'
      } else {
        group = coll[2](w, grank); ranks = coll[3](w, grank); size = coll[4](); name = coll[0]
        kname = `ncclDevKernel_${coll[1]}(ncclDevKernelArgsStorage<4096ul>)`
      }
      const k = seq.get(group) ?? 0
      seq.set(group, k + 1)
      ev.push({ ph: 'X', cat: 'cpu_op', name: 'record_param_comms', pid, tid, ts: launch - 2, dur: 6,
        args: { 'Collective name': name, 'Group size': size, 'Process Group Name': group,
          'Process Group Ranks': ranks, 'Seq': k, ...extra } })
    }
    ev.push({ ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid, tid, ts: launch, dur: 2,
      args: { correlation: c } })
    ev.push({ ph: 'X', cat: 'kernel', name: kname, pid: 0, tid: stream, ts: us(t0), dur: us(r.duration),
      args: { device: 0, stream, correlation: c, grid: [1, 1, 1], block: [1, 1, 1],
        step: r.step, seq_id: r.seq_id, mb_id: r.mb_id } })
  }
  const doc = `{"schemaVersion":1,"distributedInfo":{"backend":"nccl","rank":${grank},"world_size":${meta.world_size}},` +
    `"baseTimeNanoseconds":${BASE_NS},"traceEvents":[\n${ev.map(e => JSON.stringify(e)).join(',\n')}\n]}\n`
  fs.writeFileSync(path.join(outDir, `rank${String(grank).padStart(3, '0')}.pt.trace.json.gz`),
    zlib.gzipSync(doc, { level: 9 }))
}
console.log(`${workers.size} workers, ${steps.length} steps (${steps.join(', ')}), ${ops.length} operations -> ${outDir}`)
