//! PLACEHOLDER (not implemented yet): every request fails. Replaced by the real allocator.

super::placeholder!(FdgMalloc, Fdg);
