//! Server-sent events from bytes as they arrive, per the WHATWG `text/event-stream` format: lines
//! ending in CRLF, LF or CR, `field: value` lines, comments, events ending at a blank line.
//!
//! Written here rather than taken from `eventsource-stream`, which copies its whole remaining
//! buffer after every event: a reply read as one chunk cost time quadratic in its size, and tiny
//! chunks paid for a parser restart each (BENCHMARKS.md has the figures). This one looks at each
//! byte once and keeps only the unfinished line between chunks.

use std::collections::VecDeque;

use crate::model::ModelError;

/// UTF-8's byte-order mark, which a stream may begin with.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One event: its type (`event:`; empty when not given, which the format reads as "message") and
/// its data lines joined by `\n`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Event {
    pub(crate) event: String,
    pub(crate) data: String,
}

/// Turns chunks of bytes into events.
#[derive(Debug, Default)]
pub(crate) struct EventDecoder {
    /// The unfinished line carried over from the last chunk.
    line: Vec<u8>,
    /// The event being read.
    event: String,
    data: String,
    /// Whether the event has a `data` line (only those are dispatched).
    has_data: bool,
    /// The last chunk ended with CR: an LF starting the next one belongs to that line end.
    after_cr: bool,
    /// Whether the first bytes (and a byte-order mark among them) were seen.
    started: bool,
}

impl EventDecoder {
    /// Reads `bytes`, appending every event they complete to `out`.
    #[inline]
    pub(crate) fn push(
        &mut self,
        bytes: &[u8],
        out: &mut VecDeque<Event>,
    ) -> Result<(), ModelError> {
        // A piece of one byte inside a line (a network that hands over bytes one by one) only grows
        // the line, with no search.
        if let [byte] = bytes
            && self.started
            && !self.after_cr
            && *byte != b'\n'
            && *byte != b'\r'
        {
            self.line.push(*byte);
            return Ok(());
        }
        self.push_pieces(bytes, out)
    }

    fn push_pieces(
        &mut self,
        mut bytes: &[u8],
        out: &mut VecDeque<Event>,
    ) -> Result<(), ModelError> {
        if !self.started {
            // The stream may begin with a byte-order mark, perhaps split across pieces.
            self.line.extend_from_slice(bytes);
            if self.line.len() < BOM.len() && BOM.starts_with(&self.line) {
                return Ok(());
            }
            self.started = true;
            let head = std::mem::take(&mut self.line);
            return self.push_lines(head.strip_prefix(BOM).unwrap_or(&head), out);
        }
        if self.after_cr {
            self.after_cr = false;
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
            }
        }
        self.push_lines(bytes, out)
    }

    fn push_lines(
        &mut self,
        mut bytes: &[u8],
        out: &mut VecDeque<Event>,
    ) -> Result<(), ModelError> {
        while let Some(end) = bytes
            .iter()
            .position(|&byte| byte == b'\n' || byte == b'\r')
        {
            let line_end = bytes[end];
            if self.line.is_empty() {
                self.take_line(&bytes[..end], out)?;
            } else {
                self.line.extend_from_slice(&bytes[..end]);
                let line = std::mem::take(&mut self.line);
                self.take_line(&line, out)?;
                self.line = line;
                self.line.clear();
            }
            bytes = &bytes[end + 1..];
            if line_end == b'\r' {
                match bytes.first() {
                    Some(b'\n') => bytes = &bytes[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    /// One whole line, without its end.
    fn take_line(&mut self, line: &[u8], out: &mut VecDeque<Event>) -> Result<(), ModelError> {
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        if line[0] == b':' {
            return Ok(()); // A comment: a keep-alive, typically.
        }
        let line = std::str::from_utf8(line).map_err(|error| ModelError::Stream {
            message: format!("the stream is not valid server-sent events: {error}"),
        })?;
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => value.clone_into(&mut self.event),
            // `id` and `retry` concern reconnecting, which a request-reply stream does not do.
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut VecDeque<Event>) {
        if self.has_data {
            out.push_back(Event {
                event: std::mem::take(&mut self.event),
                data: std::mem::take(&mut self.data),
            });
        } else {
            self.event.clear();
        }
        self.has_data = false;
    }

    /// The body ended. A body that stops right after a line, without the blank line that ends its
    /// last event, still gets that event (some servers close the connection straight after the
    /// last `data:` line); a body cut in the middle of a line does not: its half event stays
    /// unread, and the reassembler says the stream was cut off.
    pub(crate) fn finish(&mut self, out: &mut VecDeque<Event>) {
        // An empty line left means the body ended at a line end (or held nothing to dispatch).
        if self.line.is_empty() {
            self.dispatch(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The events of `body` arriving in pieces of `size` bytes (0: whole), and whether it failed.
    fn decode(body: &[u8], size: usize) -> Result<Vec<Event>, ModelError> {
        let mut decoder = EventDecoder::default();
        let mut out = VecDeque::new();
        let pieces: Vec<&[u8]> = if size == 0 {
            vec![body]
        } else {
            body.chunks(size).collect()
        };
        for piece in pieces {
            decoder.push(piece, &mut out)?;
        }
        decoder.finish(&mut out);
        Ok(out.into_iter().collect())
    }

    fn event(event: &str, data: &str) -> Event {
        Event {
            event: event.to_owned(),
            data: data.to_owned(),
        }
    }

    /// Every way of cutting a body into pieces reads the same events.
    fn same_in_any_pieces(body: &str, expected: &[Event]) {
        for size in [0, 1, 2, 3, 5, 64] {
            assert_eq!(
                decode(body.as_bytes(), size).expect("valid"),
                expected,
                "pieces of {size}: {body:?}"
            );
        }
    }

    #[test]
    fn events_end_at_blank_lines_whatever_the_line_ends() {
        let expected = [event("a", "1"), event("", "2\n3")];
        same_in_any_pieces("event: a\ndata: 1\n\ndata: 2\ndata: 3\n\n", &expected);
        same_in_any_pieces(
            "event: a\r\ndata: 1\r\n\r\ndata: 2\r\ndata: 3\r\n\r\n",
            &expected,
        );
        same_in_any_pieces("event: a\rdata: 1\r\rdata: 2\rdata: 3\r\r", &expected);
    }

    #[test]
    fn comments_ids_and_events_without_data_are_skipped() {
        same_in_any_pieces(
            ": keep-alive\n\nevent: ping\n\nid: 7\nretry: 10\ndata:x\n\n",
            &[event("", "x")],
        );
    }

    #[test]
    fn only_one_space_after_the_colon_is_dropped_and_a_byte_order_mark_is_ignored() {
        same_in_any_pieces(
            "\u{FEFF}data:  two spaces\ndata\n\n",
            &[event("", " two spaces\n")],
        );
    }

    #[test]
    fn a_body_ending_after_a_line_gets_its_last_event_but_one_cut_mid_line_does_not() {
        same_in_any_pieces("data: 1\n\ndata: 2\n", &[event("", "1"), event("", "2")]);
        same_in_any_pieces("data: 1\n\ndata: 2", &[event("", "1")]);
    }

    #[test]
    fn a_line_that_is_not_utf8_is_an_error() {
        assert!(matches!(
            decode(b"data: \xFF\n\n", 0),
            Err(ModelError::Stream { .. })
        ));
    }

    #[test]
    fn multi_byte_characters_split_across_pieces_stay_whole() {
        same_in_any_pieces("data: 北京\n\n", &[event("", "北京")]);
    }
}
