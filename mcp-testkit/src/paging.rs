//! Pagination of list results, including the broken kinds (repeating cursor, endless).

use rmcp::ErrorData as McpError;

use crate::Faults;

/// The cursor returned by every page when [`Faults::repeating_cursor`] is set.
pub const REPEATING_CURSOR: &str = "repeat";

const ENDLESS_PREFIX: &str = "endless-";

/// One page of a list.
pub(crate) struct Page<T> {
    pub(crate) items: Vec<T>,
    pub(crate) next_cursor: Option<String>,
}

/// Cut `items` into the page named by `cursor`. `synth(n)` makes the n-th synthetic item
/// of an endless list.
pub(crate) fn page<T: Clone>(
    items: &[T],
    cursor: Option<&str>,
    faults: &Faults,
    synth: impl Fn(u64) -> T,
) -> Result<Page<T>, McpError> {
    if let Some(n) = cursor.and_then(|c| c.strip_prefix(ENDLESS_PREFIX)) {
        let n: u64 = n.parse().map_err(|_| bad_cursor(cursor))?;
        return Ok(Page {
            items: vec![synth(n)],
            next_cursor: Some(format!("{ENDLESS_PREFIX}{}", n + 1)),
        });
    }
    let start = match cursor {
        None | Some(REPEATING_CURSOR) => 0,
        Some(c) => c.parse::<usize>().map_err(|_| bad_cursor(cursor))?,
    };
    if start > items.len() {
        return Err(bad_cursor(cursor));
    }
    let size = faults.page_size.filter(|s| *s > 0).unwrap_or(usize::MAX);
    let end = start.saturating_add(size).min(items.len());
    let page_items = items[start..end].to_vec();
    let next_cursor = if faults.repeating_cursor {
        Some(REPEATING_CURSOR.to_owned())
    } else if end < items.len() {
        Some(end.to_string())
    } else if faults.endless_pages {
        Some(format!("{ENDLESS_PREFIX}0"))
    } else {
        None
    };
    Ok(Page {
        items: page_items,
        next_cursor,
    })
}

fn bad_cursor(cursor: Option<&str>) -> McpError {
    McpError::invalid_params(format!("fake server: unknown cursor {cursor:?}"), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn faults(page_size: Option<usize>) -> Faults {
        Faults {
            page_size,
            ..Faults::default()
        }
    }

    #[test]
    fn pages_walk_to_the_end() {
        let items = [1, 2, 3, 4, 5];
        let f = faults(Some(2));
        let mut cursor = None;
        let mut seen = Vec::new();
        loop {
            let p = page(&items, cursor.as_deref(), &f, |_| 0).unwrap();
            seen.extend(p.items);
            cursor = p.next_cursor;
            if cursor.is_none() {
                break;
            }
        }
        assert_eq!(seen, items);
    }

    #[test]
    fn no_page_size_means_one_page() {
        let p = page(&[1, 2, 3], None, &faults(None), |_| 0).unwrap();
        assert_eq!(p.items, vec![1, 2, 3]);
        assert_eq!(p.next_cursor, None);
    }

    #[test]
    fn repeating_cursor_repeats() {
        let f = Faults {
            repeating_cursor: true,
            ..faults(Some(1))
        };
        let p = page(&[1, 2], Some(REPEATING_CURSOR), &f, |_| 0).unwrap();
        assert_eq!(p.items, vec![1]);
        assert_eq!(p.next_cursor.as_deref(), Some(REPEATING_CURSOR));
    }

    #[test]
    fn endless_never_ends() {
        let f = Faults {
            endless_pages: true,
            ..faults(None)
        };
        let first = page(&[1], None, &f, |n| n + 100).unwrap();
        assert_eq!(first.next_cursor.as_deref(), Some("endless-0"));
        let next = page(&[1], Some("endless-7"), &f, |n| n + 100).unwrap();
        assert_eq!(next.items, vec![107]);
        assert_eq!(next.next_cursor.as_deref(), Some("endless-8"));
    }

    #[test]
    fn garbage_cursor_is_rejected() {
        assert!(page(&[1], Some("zzz"), &faults(None), |_| 0).is_err());
        assert!(page(&[1], Some("9"), &faults(None), |_| 0).is_err());
    }
}
