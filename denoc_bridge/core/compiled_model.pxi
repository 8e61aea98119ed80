# The compiled model: the model table taken once, with the work array of the thread that first
# calls it (compiled-core.md: "a compiled model built once per Model, kept with it, with reused
# work buffers; a call passes q, v, tau").  The public fast paths call its methods with the state
# alone: the table's type, dtype, layout and size and the work array's are checked when it is
# built, not per call, and no Python-level thread-local lookup is paid (47 ns of a 1.8 us panda
# call, measured).

from cpython.pythread cimport PyThread_get_thread_ident
from libc.stdint cimport uintptr_t


cdef class CompiledTree:
    """The model table ``kt`` (:mod:`denoc_bridge.core.layout`) taken once, and the work array
    of the first thread that calls a method (its owner).  Each method returns a new result array,
    or the status (an int, not 0: see entry.pxi) for the Python layer to name, or None when called
    from another thread than the owner (the caller then uses its thread's work array and the
    module's entries).  TypeError for a state argument that is not a C-contiguous aligned float64
    array of the expected dimensions, as the entries."""

    cdef readonly object table
    cdef const double* kf
    cdef const int* ki
    cdef Py_ssize_t L, nq, nv, rows
    cdef Arr w  # the owner's work array: 64-byte aligned rows of W doubles (tables.pxd)
    cdef void* raw  # its allocation
    cdef unsigned long owner
    cdef bint owned

    def __cinit__(self, kt):
        cdef Arr t
        take(kt, 2, False, b"kt", &t)
        if t.n1 != NT:
            raise ValueError("kt: not a model table")
        self.table = kt
        self.kf = t.data
        self.ki = <const int*>t.data
        self.L = t.n0
        self.nq = model_nq(self.ki, self.L)
        self.nv = model_nv(self.ki, self.L)
        self.rows = work_rows(self.L, self.nv, n_modules(self.ki, self.L))
        self.owned = False
        self.raw = NULL

    def __dealloc__(self):
        free(self.raw)

    cdef bint take_work(self) except -1:
        """Whether this thread owns the work array (made on the first call, by the thread that
        makes it its owner)."""
        cdef unsigned long me = PyThread_get_thread_ident()
        if not self.owned:
            self.raw = malloc(self.rows * W * sizeof(double) + 64)
            if self.raw == NULL:
                raise MemoryError()
            self.w.data = <double*>((<uintptr_t>self.raw + 63) & ~(<uintptr_t>63))
            memset(self.w.data, 0, self.rows * W * sizeof(double))
            self.w.n0, self.w.n1 = self.rows, W
            self.owner = me
            self.owned = True
        return me == self.owner

    cdef object dynamics(self, q, v, x, out, bint inverse):
        cdef Arr aq, av, ax, ao, af
        if not self.take_work():
            return None
        take(q, 1, False, b"q", &aq)
        take(v, 1, False, b"v", &av)
        take(x, 1, False, b"a" if inverse else b"tau", &ax)
        if out is None:
            out = new_array(1, self.nv)
        take(out, 1, True, b"out", &ao)
        af.data, af.n0, af.n1 = NULL, 0, 6
        cdef long status = valid_state(self.ki, self.L, &aq, &av, &ax, &af, &ao, &self.w)
        if status == 0:
            status = state_dynamics(self.ki, self.kf, self.L, &aq, &av, &ax, &af, &ao, self.w.data, inverse)
        return out if status == 0 else status

    def forward_dynamics(self, q, v, tau, out=None):
        """The joint accelerations at (q, v) under tau (entry.pxi's forward_dynamics_fast), into
        ``out`` when given (nv,), else a new array; or the status; or None (another thread)."""
        return self.dynamics(q, v, tau, out, False)

    def inverse_dynamics(self, q, v, a, out=None):
        """The joint torques that give the accelerations a at (q, v) (inverse_dynamics_fast);
        the returns of :meth:`forward_dynamics`."""
        return self.dynamics(q, v, a, out, True)

    cdef object matrix(self, q, out, bint inverse):
        cdef Arr aq, ao
        if not self.take_work():
            return None
        take(q, 1, False, b"q", &aq)
        if out is None:
            out = new_array(2, self.nv)
        take(out, 2, True, b"out", &ao)
        cdef long status = valid_configuration(self.ki, self.L, &aq, &self.w)
        if status == 0 and (ao.n0 != self.nv or ao.n1 != self.nv):
            status = -2
        if status == 0:
            status = gim_of_state(self.ki, self.kf, self.L, aq.data, aq.n0, self.nv, self.w.data, ao.data, inverse,
                                  WAY_CHOSEN)
            if status == OUT_OF_MEMORY:
                raise MemoryError()
        return out if status == 0 else status

    def mass_matrix(self, q, out=None):
        """The GIM at q (mass_matrix_state), into ``out`` (nv, nv) when given, else a new
        array; the returns of :meth:`forward_dynamics`."""
        return self.matrix(q, out, False)

    def inverse_mass_matrix(self, q, out=None):
        """The inverse GIM at q (inverse_mass_matrix_state); the returns of :meth:`mass_matrix`."""
        return self.matrix(q, out, True)
