//! The first, indexing pass: the file header, the top-level records (their
//! lengths let us hop from one to the next), the names (STRING, LOAD_CLASS)
//! and, inside each HEAP_DUMP / HEAP_DUMP_SEGMENT, the sub-records. Sub-records
//! carry no length of their own, so finding the next one means reading the
//! current one's header: this walk is sequential within a segment (segments
//! run in parallel) and only reads headers. It cuts the object sub-records
//! into chunks that the second pass (`decode`) reads in parallel, and keeps
//! the positions of the class dumps and the roots.

use std::collections::HashMap;

use super::classes::parse_class_dump;
use super::reader::{BasicType, Reader};
use crate::model::{Collector, Kind};

/// What the file header says.
#[derive(Debug, Clone, Copy)]
pub(super) struct Header {
    /// The last digit of `JAVA PROFILE 1.0.x`.
    pub version: u8,
    pub id_size: usize,
    /// Milliseconds since the epoch.
    pub timestamp_ms: u64,
    /// Offset of the first record.
    pub body: usize,
}

pub(super) fn header(bytes: &[u8]) -> Result<Header, String> {
    let nul = bytes
        .iter()
        .take(32)
        .position(|&b| b == 0)
        .ok_or("no NUL after the `JAVA PROFILE` header")?;
    let version = match &bytes[..nul] {
        b"JAVA PROFILE 1.0.1" => 1,
        b"JAVA PROFILE 1.0.2" => 2,
        b"JAVA PROFILE 1.0.3" => 3,
        other => {
            return Err(format!(
                "unsupported HPROF version `{}` (1.0.1 to 1.0.3 are read)",
                String::from_utf8_lossy(other)
            ))
        }
    };
    let mut r = Reader::new(bytes, nul + 1, 4);
    let (Some(id_size), Some(hi), Some(lo)) = (r.u4(), r.u4(), r.u4()) else {
        return Err("the file ends inside the HPROF header".into());
    };
    if id_size != 4 && id_size != 8 {
        return Err(format!(
            "identifier size {id_size} in the HPROF header; only 4 and 8 are valid"
        ));
    }
    Ok(Header {
        version,
        id_size: id_size as usize,
        timestamp_ms: ((hi as u64) << 32) | lo as u64,
        body: r.pos(),
    })
}

pub(super) const TAG_STRING: u8 = 0x01;
pub(super) const TAG_LOAD_CLASS: u8 = 0x02;
pub(super) const TAG_STACK_FRAME: u8 = 0x04;
pub(super) const TAG_STACK_TRACE: u8 = 0x05;
pub(super) const TAG_HEAP_DUMP: u8 = 0x0c;
pub(super) const TAG_HEAP_DUMP_SEGMENT: u8 = 0x1c;
/// Top-level tags we know and skip (HPROF 1.0.x and Android).
const KNOWN_TAGS: [u8; 11] = [
    0x03, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0d, 0x0e, 0x2c, 0x0f,
];

/// The top-level records that matter, located.
#[derive(Default)]
pub(super) struct Records {
    /// STRING id → byte range of its UTF-8 text in the file.
    pub strings: HashMap<u64, (usize, usize)>,
    /// LOAD_CLASS: (class object id, name string id), in file order.
    pub loaded: Vec<(u64, u64)>,
    /// LOAD_CLASS: class serial number → name string id (stack frames
    /// name their class by its serial).
    pub class_serials: HashMap<u32, u64>,
    /// STACK FRAME records by frame id.
    pub frames: HashMap<u64, Frame>,
    /// STACK TRACE records by serial number: (thread serial, frame ids
    /// from the top of the stack).
    pub traces: HashMap<u32, (u32, Vec<u64>)>,
    /// Byte ranges of the heap dump records' bodies.
    pub segments: Vec<(usize, usize)>,
    pub count: u64,
    pub issues: Collector,
}

/// Hops over the top-level records.
pub(super) fn records(bytes: &[u8], h: &Header) -> Records {
    let mut out = Records::default();
    let mut pos = h.body;
    while pos < bytes.len() {
        let mut r = Reader::new(bytes, pos, h.id_size);
        let (Some(tag), Some(_time), Some(len)) = (r.u1(), r.u4(), r.u4()) else {
            out.issues.ended_early(Kind::Skipped, pos as u64, 1, || {
                format!(
                    "the file ended early: it ends inside a record header ({} bytes left; ignored)",
                    bytes.len() - pos
                )
            });
            break;
        };
        out.count += 1;
        let body = r.pos();
        let mut end = body + len as usize;
        if end > bytes.len() {
            let left = bytes.len() - body;
            let dump = tag == TAG_HEAP_DUMP || tag == TAG_HEAP_DUMP_SEGMENT;
            out.issues.ended_early(Kind::Skipped, pos as u64, 1, || {
                format!(
                    "the file ended early: record 0x{tag:02x} says {len} bytes but only {left} remain (a truncated file); {}",
                    if dump { "its sub-records are read as far as they go" } else { "ignored" }
                )
            });
            if !dump {
                break;
            }
            end = bytes.len();
        }
        record(bytes, h, tag, pos, body, end, &mut out);
        pos = end;
    }
    out
}

fn record(
    bytes: &[u8],
    h: &Header,
    tag: u8,
    pos: usize,
    body: usize,
    end: usize,
    out: &mut Records,
) {
    let mut r = Reader::new(&bytes[..end], body, h.id_size);
    match tag {
        TAG_STRING => match r.id() {
            Some(id) => {
                out.strings.entry(id).or_insert((r.pos(), end));
            }
            None => out.issues.push(Kind::Skipped, pos as u64, || {
                "STRING record shorter than an identifier; ignored".into()
            }),
        },
        TAG_LOAD_CLASS => {
            let fields = (r.u4(), r.id(), r.u4(), r.id());
            match fields {
                (Some(serial), Some(class), Some(_), Some(name)) => {
                    out.loaded.push((class, name));
                    out.class_serials.insert(serial, name);
                }
                _ => out.issues.push(Kind::Skipped, pos as u64, || {
                    "LOAD_CLASS record too short; ignored".into()
                }),
            }
        }
        TAG_HEAP_DUMP | TAG_HEAP_DUMP_SEGMENT => out.segments.push((body, end)),
        TAG_STACK_FRAME => {
            let f = (r.id(), r.id(), r.id(), r.id(), r.u4(), r.u4());
            match f {
                (Some(id), Some(method), Some(_), Some(source), Some(class), Some(line)) => {
                    out.frames.insert(
                        id,
                        Frame {
                            method,
                            source,
                            class,
                            line: line as i32,
                        },
                    );
                }
                _ => out.issues.push(Kind::Skipped, pos as u64, || {
                    "STACK FRAME record too short; ignored".into()
                }),
            }
        }
        TAG_STACK_TRACE => {
            let head = (r.u4(), r.u4(), r.u4());
            let (Some(serial), Some(thread), Some(n)) = head else {
                out.issues.push(Kind::Skipped, pos as u64, || {
                    "STACK TRACE record too short; ignored".into()
                });
                return;
            };
            // The record's length bounds the frames read.
            let n = (n as usize).min(r.remaining() / h.id_size);
            let frames = (0..n).filter_map(|_| r.id()).collect();
            out.traces.insert(serial, (thread, frames));
        }
        t if KNOWN_TAGS.contains(&t) => {}
        t => out.issues.push(Kind::Skipped, pos as u64, || {
            format!(
                "unknown record tag 0x{t:02x} ({} bytes); skipped",
                end - body
            )
        }),
    }
}

/// A STACK FRAME record: string ids of its method name and source file,
/// its class's serial number, and its line (> 0; HPROF's -1 unknown, -2
/// compiled, -3 native).
#[derive(Debug, Clone, Copy)]
pub(super) struct Frame {
    pub method: u64,
    pub source: u64,
    pub class: u32,
    pub line: i32,
}

/// A run of whole sub-records that one decode task reads.
#[derive(Debug, Clone, Copy)]
pub(super) struct Chunk {
    pub start: usize,
    pub end: usize,
    /// Object sub-records in it (instances, arrays, classes).
    pub objects: u32,
}

/// A root sub-record: its object, its tag and where it is.
#[derive(Debug, Clone, Copy)]
pub(super) struct RawRoot {
    pub id: u64,
    pub tag: u8,
    pub offset: u64,
    /// The thread serial number of a root in a thread (Java frame, JNI
    /// local, native stack, thread block, thread object), else `NO_SERIAL`.
    pub thread: u32,
    /// A Java frame's or JNI local's frame number in its thread's stack
    /// trace; a thread object's stack trace serial; else `NO_SERIAL`.
    pub frame: u32,
}

/// No thread, frame or trace.
pub(super) const NO_SERIAL: u32 = u32::MAX;

/// What one segment holds.
#[derive(Default)]
pub(super) struct SegmentScan {
    pub chunks: Vec<Chunk>,
    /// Offsets of the CLASS_DUMP sub-records' bodies (after the tag).
    pub classes: Vec<usize>,
    pub roots: Vec<RawRoot>,
    pub sub_records: u64,
    pub issues: Collector,
}

pub(super) const SUB_CLASS_DUMP: u8 = 0x20;
pub(super) const SUB_INSTANCE: u8 = 0x21;
pub(super) const SUB_OBJ_ARRAY: u8 = 0x22;
pub(super) const SUB_PRIM_ARRAY: u8 = 0x23;
pub(super) const SUB_PRIM_ARRAY_NODATA: u8 = 0xc3;
const SUB_HEAP_DUMP_INFO: u8 = 0xfe;

/// Bytes after the object id of a root sub-record, or `None` when `tag`
/// is not a root.
pub(super) fn root_extra(tag: u8, id_size: usize) -> Option<usize> {
    Some(match tag {
        0xff | 0x05 | 0x07 | 0x89 | 0x8a | 0x8b | 0x8c | 0x8d | 0x90 => 0,
        0x01 => id_size,
        0x04 | 0x06 => 4,
        0x02 | 0x03 | 0x08 | 0x8e => 8,
        _ => return None,
    })
}

/// Why a segment's walk stopped early.
enum Stop {
    Truncated,
    Bad(String),
}

/// Walks one segment's sub-records, cutting chunks of about `chunk_size`;
/// each chunk cut is handed to `done` (which gives its pages back).
pub(super) fn scan_segment(
    bytes: &[u8],
    (start, end): (usize, usize),
    id_size: usize,
    chunk_size: usize,
    done: impl Fn(&Chunk),
) -> SegmentScan {
    let mut out = SegmentScan::default();
    let mut r = Reader::new(&bytes[..end], start, id_size);
    let mut chunk = Chunk {
        start,
        end: start,
        objects: 0,
    };
    while r.remaining() > 0 {
        let at = r.pos();
        if at - chunk.start >= chunk_size {
            chunk.end = at;
            done(&chunk);
            out.chunks.push(chunk);
            chunk = Chunk {
                start: at,
                end: at,
                objects: 0,
            };
        }
        let tag = r.u1().unwrap_or(0);
        match sub_record(&mut r, tag, &mut out) {
            Ok(object) => {
                out.sub_records += 1;
                chunk.objects += object as u32;
            }
            Err(stop) => {
                let left = end - at;
                out.issues.push(Kind::Skipped, at as u64, || match stop {
                    Stop::Truncated => format!(
                        "sub-record 0x{tag:02x} runs past the end of its heap dump segment; the last {left} bytes of the segment are skipped"
                    ),
                    Stop::Bad(why) => format!("{why}; the last {left} bytes of the heap dump segment are skipped"),
                });
                r = Reader::new(&bytes[..at], at, id_size);
                break;
            }
        }
    }
    chunk.end = r.pos();
    if chunk.end > chunk.start {
        out.chunks.push(chunk);
    }
    out
}

/// Steps over one sub-record whose tag was read; true for an object.
fn sub_record(r: &mut Reader, tag: u8, out: &mut SegmentScan) -> Result<bool, Stop> {
    let id_size = r.id_size();
    let t = Stop::Truncated;
    match tag {
        SUB_INSTANCE => {
            r.skip(2 * id_size + 4).ok_or(t)?;
            let n = r.u4().ok_or(Stop::Truncated)?;
            r.skip(n as usize).ok_or(Stop::Truncated)?;
            Ok(true)
        }
        SUB_OBJ_ARRAY => {
            r.skip(id_size + 4).ok_or(t)?;
            let n = r.u4().ok_or(Stop::Truncated)? as usize;
            r.skip(id_size).ok_or(Stop::Truncated)?;
            r.skip(n.checked_mul(id_size).ok_or(Stop::Truncated)?)
                .ok_or(Stop::Truncated)?;
            Ok(true)
        }
        SUB_PRIM_ARRAY | SUB_PRIM_ARRAY_NODATA => {
            r.skip(id_size + 4).ok_or(t)?;
            let n = r.u4().ok_or(Stop::Truncated)? as usize;
            let et = r.u1().ok_or(Stop::Truncated)?;
            let Some(ty) = BasicType::from_tag(et).filter(|t| *t != BasicType::Object) else {
                return Err(Stop::Bad(format!(
                    "primitive array of unknown element type 0x{et:02x}"
                )));
            };
            if tag == SUB_PRIM_ARRAY {
                let n = n
                    .checked_mul(ty.file_size(id_size))
                    .ok_or(Stop::Truncated)?;
                r.skip(n).ok_or(Stop::Truncated)?;
            }
            Ok(true)
        }
        SUB_CLASS_DUMP => {
            let body = r.pos();
            parse_class_dump(r).map_err(|e| match e {
                None => Stop::Truncated,
                Some(why) => Stop::Bad(why),
            })?;
            out.classes.push(body);
            Ok(true)
        }
        SUB_HEAP_DUMP_INFO => {
            r.skip(4 + id_size).ok_or(t)?;
            Ok(false)
        }
        _ => match root_extra(tag, id_size) {
            Some(extra) => {
                let offset = r.pos() as u64 - 1;
                let id = r.id().ok_or(Stop::Truncated)?;
                let (mut thread, mut frame) = (NO_SERIAL, NO_SERIAL);
                match tag {
                    // Java frame, JNI local, thread object: thread serial,
                    // then frame number (trace serial).
                    0x02 | 0x03 | 0x08 => {
                        thread = r.u4().ok_or(Stop::Truncated)?;
                        frame = r.u4().ok_or(Stop::Truncated)?;
                    }
                    // Native stack, thread block: thread serial.
                    0x04 | 0x06 => thread = r.u4().ok_or(Stop::Truncated)?,
                    _ => r.skip(extra).ok_or(Stop::Truncated)?,
                }
                out.roots.push(RawRoot {
                    id,
                    tag,
                    offset,
                    thread,
                    frame,
                });
                Ok(false)
            }
            None => Err(Stop::Bad(format!("unknown sub-record tag 0x{tag:02x}"))),
        },
    }
}
