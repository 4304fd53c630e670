//! [`Sizes`]: the objects' shallow sizes, a [`Packed`] array: the
//! narrowest of 1, 2, 4 or 8 bytes an object, the rare large sizes in a
//! sorted side table (see `crate::mem::Packed` for the forms and how one
//! is chosen). Most objects of every format are small (a few dozen bytes;
//! the arrays and strings of a few KiB are the exceptions), so nearly
//! every heap gets 1 or 2 bytes an object. Built in memory from the
//! importer's `u64` sizes ([`From`]), or in a spill file within a memory
//! budget ([`Packed::from_scratch`]).

use crate::mem::Packed;

/// Each object's shallow size in bytes; read through [`Packed::get`].
pub type Sizes = Packed;
