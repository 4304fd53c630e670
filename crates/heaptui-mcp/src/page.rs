//! Small answers: every list is a page (`offset`, `limit`), says how much of
//! it was shown ("50 of 14,071; ask with offset 50"), and no answer is
//! longer than [`MAX_BYTES`] of JSON. A page that would be longer loses rows
//! from its end (the note then names the offset to ask with); anything else
//! too long (a very long name) is shortened by [`bound`], the one place
//! every answer passes through.

use serde_json::{Map, Value};

use heaptui_core::text::count;

/// The most JSON one answer holds, in bytes.
pub const MAX_BYTES: usize = 32 * 1024;
/// Rows of a page when the call names no `limit`.
pub const DEFAULT_LIMIT: usize = 20;
/// The most rows a page holds, whatever `limit` asks.
pub const MAX_LIMIT: usize = 200;

/// Why a call got no answer: a message for the assistant (a tool error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

impl Refusal {
    /// A refusal with this message.
    pub fn new(message: impl Into<String>) -> Refusal {
        Refusal(message.into())
    }
}

/// The rows `offset..offset + limit` of a list of `total`, `limit` at most
/// [`MAX_LIMIT`] (`None`: [`DEFAULT_LIMIT`]). An offset past the end is
/// refused (an empty list accepts offset 0).
pub fn window(
    total: usize,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<std::ops::Range<usize>, Refusal> {
    let offset = offset.unwrap_or(0);
    if offset > total as u64 || (offset == total as u64 && total > 0) {
        return Err(Refusal::new(format!(
            "offset {offset} is past the end of the list ({} rows; offsets start at 0)",
            count(total as u64)
        )));
    }
    let offset = offset as usize;
    let limit = limit.map_or(DEFAULT_LIMIT, |l| l.clamp(1, MAX_LIMIT as u64) as usize);
    Ok(offset..(offset + limit).min(total))
}

/// A page of a list: the answer's other keys (`head`), then the rows under
/// `key`, then `shown`/`cut`. [`Page::finish`] drops rows from the end
/// until the answer fits.
pub struct Page {
    /// Keys before the list (what the list is of).
    pub head: Map<String, Value>,
    /// The list's key in the answer.
    pub key: &'static str,
    /// The rows of this page.
    pub rows: Vec<Value>,
    /// The first row's position in the whole list.
    pub offset: usize,
    /// Rows in the whole list.
    pub total: usize,
}

impl Page {
    /// A page of `rows` starting at `offset` of `total`, with no head.
    pub fn new(key: &'static str, rows: Vec<Value>, offset: usize, total: usize) -> Page {
        Page {
            head: Map::new(),
            key,
            rows,
            offset,
            total,
        }
    }

    /// Adds a key before the list.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Page {
        self.head.insert(key.into(), value.into());
        self
    }

    /// The answer, as many rows as fit in [`MAX_BYTES`] (at least one
    /// row is tried; [`bound`] shortens what still does not fit).
    pub fn finish(self) -> Value {
        let Page {
            head,
            key,
            mut rows,
            offset,
            total,
        } = self;
        let answer = |rows: Vec<Value>| {
            let mut out = head.clone();
            let shown = rows.len();
            out.insert(key.into(), Value::Array(rows));
            out.insert("total".into(), total.into());
            out.insert("offset".into(), offset.into());
            if offset + shown < total || offset > 0 {
                out.insert("cut".into(), cut_note(offset, shown, total).into());
            }
            Value::Object(out)
        };
        // Sizes of the rows, to drop as many as needed at once.
        let sizes: Vec<usize> = rows.iter().map(|r| json_len(r) + 1).collect();
        let base = json_len(&answer(Vec::new())) + 64;
        let mut used = base;
        let fits = sizes
            .iter()
            .take_while(|&&s| {
                used += s;
                used <= MAX_BYTES
            })
            .count()
            .max(1)
            .min(rows.len());
        rows.truncate(fits);
        answer(rows)
    }
}

/// "rows 50–69 of 14,071; ask with offset 70" (or what is left to ask).
fn cut_note(offset: usize, shown: usize, total: usize) -> String {
    let end = offset + shown;
    let range = match shown {
        0 => format!("no rows of {}", count(total as u64)),
        _ => format!(
            "rows {}–{} of {}",
            count(offset as u64),
            count(end as u64 - 1),
            count(total as u64)
        ),
    };
    match end < total {
        true => format!("{range}; ask with offset {end} for more"),
        false => format!("{range}; the end of the list"),
    }
}

/// Bytes of a value's compact JSON.
pub fn json_len(v: &Value) -> usize {
    serde_json::to_vec(v).map_or(usize::MAX, |b| b.len())
}

/// Strings longer than this are cut by [`bound`].
const LONG_TEXT: usize = 2000;

/// `answer` within [`MAX_BYTES`]: when longer, every string over
/// [`LONG_TEXT`] characters is cut (ending `…`), then the longest arrays
/// are halved until it fits, and a `shortened` key says so. Pages are
/// already fitted by [`Page::finish`]; this is the guard for the rest.
pub fn bound(mut answer: Value) -> Value {
    if json_len(&answer) <= MAX_BYTES {
        return answer;
    }
    cut_strings(&mut answer);
    let mut halved = 0;
    while json_len(&answer) > MAX_BYTES && halve_longest(&mut answer) {
        halved += 1;
    }
    if json_len(&answer) > MAX_BYTES {
        // Nothing left to halve (a huge object of scalars): say only that.
        answer = Value::Object(Map::new());
    }
    if let Value::Object(map) = &mut answer {
        map.insert(
            "shortened".into(),
            format!(
                "this answer was cut to fit {} KiB ({halved} lists halved, long text cut); ask for pages of its lists",
                MAX_BYTES / 1024
            )
            .into(),
        );
    }
    answer
}

fn cut_strings(v: &mut Value) {
    match v {
        Value::String(s) if s.chars().count() > LONG_TEXT => {
            let cut: String = s.chars().take(LONG_TEXT).collect();
            *s = cut + "…";
        }
        Value::Array(a) => a.iter_mut().for_each(cut_strings),
        Value::Object(m) => m.values_mut().for_each(cut_strings),
        _ => {}
    }
}

/// Halves the longest array (of at least 2 elements) anywhere in `v`;
/// false when there is none.
fn halve_longest(v: &mut Value) -> bool {
    fn longest(v: &Value) -> usize {
        match v {
            Value::Array(a) => a.iter().map(longest).max().unwrap_or(0).max(a.len()),
            Value::Object(m) => m.values().map(longest).max().unwrap_or(0),
            _ => 0,
        }
    }
    fn halve(v: &mut Value, len: usize) -> bool {
        match v {
            Value::Array(a) if a.len() == len => {
                a.truncate(len / 2);
                true
            }
            Value::Array(a) => a.iter_mut().any(|x| halve(x, len)),
            Value::Object(m) => m.values_mut().any(|x| halve(x, len)),
            _ => false,
        }
    }
    let len = longest(v);
    len >= 2 && halve(v, len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_window_is_clamped_and_a_past_offset_refused() {
        assert_eq!(window(100, None, None), Ok(0..20));
        assert_eq!(window(100, Some(95), Some(10)), Ok(95..100));
        assert_eq!(window(100, Some(0), Some(u64::MAX)), Ok(0..100));
        assert_eq!(window(1000, Some(0), Some(0)), Ok(0..1));
        assert_eq!(window(0, None, None), Ok(0..0));
        assert!(window(100, Some(100), None).is_err());
        assert!(window(100, Some(u64::MAX), None).is_err());
    }

    #[test]
    fn a_page_says_where_it_was_cut() {
        let rows = (0..5).map(|i| json!(i)).collect();
        let v = Page::new("rows", rows, 10, 14_071).finish();
        assert_eq!(v["total"], 14_071);
        assert_eq!(
            v["cut"],
            "rows 10–14 of 14,071; ask with offset 15 for more"
        );
        let whole = Page::new("rows", vec![json!(1)], 0, 1).finish();
        assert!(whole.get("cut").is_none());
    }

    #[test]
    fn a_page_too_long_loses_rows_from_its_end() {
        let row = json!({"name": "x".repeat(1000)});
        let rows = vec![row; 100];
        let v = Page::new("rows", rows, 0, 100).finish();
        assert!(json_len(&v) <= MAX_BYTES);
        let shown = v["rows"].as_array().unwrap().len();
        assert!(shown > 20 && shown < 100, "{shown}");
        let note = v["cut"].as_str().unwrap();
        assert!(note.ends_with(&format!("ask with offset {shown} for more")));
    }

    #[test]
    fn bound_shortens_what_no_page_cut() {
        let small = json!({"a": [1, 2, 3]});
        assert_eq!(bound(small.clone()), small);
        let big = json!({"a": vec!["y".repeat(100); 2000], "b": "z".repeat(100_000)});
        let v = bound(big);
        assert!(json_len(&v) <= MAX_BYTES);
        assert!(v["shortened"].is_string());
        assert!(v["b"].as_str().unwrap().ends_with('…'));
        let nested = json!([[vec![0u64; 50_000]]]);
        assert!(json_len(&bound(nested)) <= MAX_BYTES);
    }
}
