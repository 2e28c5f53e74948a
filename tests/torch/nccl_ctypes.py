"""The few NCCL calls the Python test jobs make, through ctypes.

The library is loaded with RTLD_GLOBAL and every function is looked up in
the global scope (dlsym(RTLD_DEFAULT)), as a program linked against NCCL
resolves it: a preloaded library's wrapper comes first there.  No torch
here, so jobs without torch can use it too.
"""

import ctypes

NCCL_FLOAT64, NCCL_SUM = 8, 0
UNIQUE_ID_BYTES = 128


class Nccl:
    def __init__(self, lib, rank, world, share_id=lambda raw: raw):
        """share_id(bytes or None) -> bytes: hands rank 0's unique id to
        every rank (identity for one rank)."""
        ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
        self.api = ctypes.CDLL(None)
        uid = (ctypes.c_char * UNIQUE_ID_BYTES)()
        if rank == 0:
            self.check(self.api.ncclGetUniqueId(ctypes.byref(uid)), "ncclGetUniqueId")
        raw = share_id(bytes(memoryview(uid)) if rank == 0 else None)
        ctypes.memmove(uid, raw, UNIQUE_ID_BYTES)
        self.comm = ctypes.c_void_p()
        # ncclUniqueId is passed by value: a struct of 128 chars.
        by_value = type("ncclUniqueId", (ctypes.Structure,),
                        {"_fields_": [("internal", ctypes.c_char * UNIQUE_ID_BYTES)]})
        self.check(self.api.ncclCommInitRank(ctypes.byref(self.comm), world,
                                             by_value.from_buffer_copy(uid), rank),
                   "ncclCommInitRank")
        self.buf = (ctypes.c_double * 1)()

    @staticmethod
    def check(rc, what):
        if rc != 0:
            raise RuntimeError(f"{what} returned {rc}")

    def all_reduce_sum(self, value):
        self.buf[0] = value
        ptr = ctypes.cast(self.buf, ctypes.c_void_p)
        self.check(self.api.ncclAllReduce(ptr, ptr, ctypes.c_size_t(1), NCCL_FLOAT64, NCCL_SUM,
                                          self.comm, ctypes.c_void_p(0)), "ncclAllReduce")
        return self.buf[0]

    def close(self):
        self.check(self.api.ncclCommDestroy(self.comm), "ncclCommDestroy")
