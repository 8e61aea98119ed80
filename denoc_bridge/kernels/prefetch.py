"""Software prefetch of array rows (``llvm.prefetch``).

The recursions stream through the table and the work array one link at a time.  Past the
caches (chains of 10^5 links) the hardware prefetchers alone leave the passes 20-40 %
slower, and by an amount that changes from process to process with where the compiled
code lands (measured: 70 vs 85-100 ns per DOF at 100,000 DOF for the same machine code
loaded from numba's cache); asking for the rows a few links ahead removes that variance.
A prefetch never faults, so rows past either end of the array are harmless.
"""

from llvmlite import ir
from numba import config, types
from numba.core import cgutils
from numba.extending import intrinsic

from denoc_bridge.core.layout import AHEAD, PREFETCH_LINKS  # noqa: F401  (as numba's passes read them)


@intrinsic
def prefetch(typingctx, arr, row, col):
    """Hint the cache to load the 64-byte line holding ``arr[row, col]`` (``arr`` 2-D); no
    bounds check, no fault."""
    if not (
        isinstance(arr, types.Array)
        and arr.ndim == 2
        and isinstance(row, types.Integer)
        and isinstance(col, types.Integer)
    ):
        return None
    sig = types.void(arr, row, col)

    def codegen(context, builder, signature, args):
        aryty, rowty, colty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        r = context.cast(builder, args[1], rowty, types.intp)
        c = context.cast(builder, args[2], colty, types.intp)
        s0, s1 = cgutils.unpack_tuple(builder, ary.strides, 2)
        base = builder.ptrtoint(ary.data, cgutils.intp_t)
        addr = builder.add(base, builder.add(builder.mul(r, s0), builder.mul(c, s1)))
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0"
        )
        builder.call(fn, [builder.inttoptr(addr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


if config.DISABLE_JIT:  # kernels run as Python (op counts)

    def prefetch(arr, row, col):
        """No-op stand-in when the kernels run as plain Python."""
