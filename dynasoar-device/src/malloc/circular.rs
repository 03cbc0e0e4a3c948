//! PLACEHOLDER (not implemented yet): every request fails. Replaced by the real allocator.

super::placeholder!(Circular, Circular);
super::placeholder!(CircularFused, CircularFused);
super::placeholder!(CircularMulti, CircularMulti);
super::placeholder!(CircularFusedMulti, CircularFusedMulti);
