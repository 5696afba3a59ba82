//! Host memory that an output lives in: the heap, or, on a GPU, a page-locked buffer from the
//! device's pool that the copies from the device write straight into. A page-locked buffer goes
//! back to its pool when the output is dropped, so a worker's steady state allocates none.

use std::fmt;
use std::ops::{Deref, DerefMut};

pub struct HostBuffer<T: Copy>(Inner<T>);

enum Inner<T: Copy> {
    Heap(Vec<T>),
    #[cfg(feature = "gpu")]
    Pinned(crate::gpu::Pinned<T>),
}

impl<T: Copy> From<Vec<T>> for HostBuffer<T> {
    fn from(values: Vec<T>) -> Self {
        HostBuffer(Inner::Heap(values))
    }
}

#[cfg(feature = "gpu")]
impl<T: Copy> From<crate::gpu::Pinned<T>> for HostBuffer<T> {
    fn from(values: crate::gpu::Pinned<T>) -> Self {
        HostBuffer(Inner::Pinned(values))
    }
}

impl<T: Copy> HostBuffer<T> {
    /// Whether the buffer is page-locked (came from a GPU).
    pub fn is_pinned(&self) -> bool {
        !matches!(self.0, Inner::Heap(_))
    }
}

impl<T: Copy> Deref for HostBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match &self.0 {
            Inner::Heap(values) => values,
            #[cfg(feature = "gpu")]
            Inner::Pinned(values) => values,
        }
    }
}

impl<T: Copy> DerefMut for HostBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.0 {
            Inner::Heap(values) => values,
            #[cfg(feature = "gpu")]
            Inner::Pinned(values) => values,
        }
    }
}

/// A copy is on the heap: the pool's buffers belong to the evaluations that filled them.
impl<T: Copy> Clone for HostBuffer<T> {
    fn clone(&self) -> Self {
        HostBuffer::from(self.deref().to_vec())
    }
}

impl<T: Copy> fmt::Debug for HostBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.is_pinned() {
            "page-locked"
        } else {
            "heap"
        };
        write!(f, "HostBuffer({} values, {kind})", self.len())
    }
}
