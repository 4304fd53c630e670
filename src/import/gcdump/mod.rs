//! The .NET gcdump importer (SPEC §1.1). Not written yet: files of this format are
//! refused with one line and exit code 2.

use std::path::Path;

use super::source::Source;
use super::{ImportError, InputError};
use crate::model::Model;
use crate::progress::Progress;

pub fn import(path: &Path, _source: &Source, _progress: &Progress) -> Result<Model, ImportError> {
    Err(InputError::new(path, ".NET gcdump files cannot be read yet").into())
}
