//! A port of Go's `text/tabwriter` (the elastic-tabstops algorithm kubectl's output goes through).
//!
//! kubectl never pads columns itself: `get` writes tab-separated rows into a tabwriter with
//! `minwidth 6, padding 3`, and `describe` writes its whole text into one with `minwidth 0,
//! padding 2`. Column blocks end at any line with fewer cells, which is why `describe` realigns
//! after every section header. Porting the algorithm, rather than approximating it, makes every
//! table line up exactly as a terminal running kubectl would show it.

/// `printers.GetNewTabWriter` (cli-runtime): what `kubectl get` tables go through.
pub const GET_MIN_WIDTH: usize = 6;
/// See [`GET_MIN_WIDTH`].
pub const GET_PADDING: usize = 3;
/// `describe.tabbedString`: what `kubectl describe` (and `rollout history`) goes through.
pub const DESCRIBE_MIN_WIDTH: usize = 0;
/// See [`DESCRIBE_MIN_WIDTH`].
pub const DESCRIBE_PADDING: usize = 2;

#[derive(Clone, Copy, Debug, Default)]
struct Cell {
    /// Byte range of the text in the line.
    start: usize,
    end: usize,
    /// Width in runes (what Go counts).
    width: usize,
}

/// Formats tab-terminated cells the way Go's `tabwriter.Writer` does with a space pad character
/// and no flags: a column is the run of consecutive lines that have a tab-terminated cell at that
/// index; each cell is padded to the widest cell of its column plus `padding` (at least
/// `min_width`); the text after a line's last tab is not part of any column.
pub fn format(text: &str, min_width: usize, padding: usize) -> String {
    // Split into lines; every line has at least one cell. A trailing newline leaves an empty last
    // line with no cells, as Go's writer holds an unterminated empty cell there.
    let mut lines: Vec<(&str, Vec<Cell>)> = Vec::new();
    let mut rest = text;
    loop {
        let (line, more) = match rest.find('\n') {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        let mut cells = Vec::new();
        let mut start = 0;
        for (i, ch) in line.char_indices() {
            if ch == '\t' {
                cells.push(Cell {
                    start,
                    end: i,
                    width: line[start..i].chars().count(),
                });
                start = i + 1;
            }
        }
        let last = Cell {
            start,
            end: line.len(),
            width: line[start..].chars().count(),
        };
        if more.is_some() || last.end > last.start {
            cells.push(last);
        }
        lines.push((line, cells));
        match more {
            Some(m) => rest = m,
            None => break,
        }
    }
    let mut out = String::with_capacity(text.len() * 2);
    let mut widths: Vec<usize> = Vec::new();
    format_block(
        &lines,
        0,
        lines.len(),
        &mut widths,
        min_width,
        padding,
        &mut out,
    );
    out
}

// `Writer.format`: finds the column blocks of column `widths.len()` between line0 and line1,
// recursing for the columns to the right once the width of this one is known.
fn format_block(
    lines: &[(&str, Vec<Cell>)],
    line0: usize,
    line1: usize,
    widths: &mut Vec<usize>,
    min_width: usize,
    padding: usize,
    out: &mut String,
) {
    let column = widths.len();
    let mut start = line0;
    let mut this = line0;
    while this < line1 {
        if column + 1 < lines[this].1.len() {
            write_lines(lines, start, this, widths, out);
            start = this;
            let mut width = min_width;
            while this < line1 && column + 1 < lines[this].1.len() {
                width = width.max(lines[this].1[column].width + padding);
                this += 1;
            }
            widths.push(width);
            format_block(lines, start, this, widths, min_width, padding, out);
            widths.pop();
            start = this;
        } else {
            this += 1;
        }
    }
    write_lines(lines, start, line1, widths, out);
}

// `Writer.writeLines`: every cell with a known column width is padded to it.
fn write_lines(
    lines: &[(&str, Vec<Cell>)],
    line0: usize,
    line1: usize,
    widths: &[usize],
    out: &mut String,
) {
    for (i, (line, cells)) in lines.iter().enumerate().take(line1).skip(line0) {
        for (j, c) in cells.iter().enumerate() {
            out.push_str(&line[c.start..c.end]);
            if let Some(&w) = widths.get(j) {
                for _ in c.width..w {
                    out.push(' ');
                }
            }
        }
        if i + 1 < lines.len() {
            out.push('\n');
        }
    }
}

/// A `kubectl get` table: header and rows joined with tabs, through the get tabwriter.
pub fn get_table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut text = String::new();
    if !header.is_empty() {
        text.push_str(&header.join("\t"));
        text.push('\n');
    }
    for r in rows {
        text.push_str(&r.join("\t"));
        text.push('\n');
    }
    format(&text, GET_MIN_WIDTH, GET_PADDING)
}

/// Text written for `kubectl describe`, through the describe tabwriter.
pub fn describe_text(text: &str) -> String {
    format(text, DESCRIBE_MIN_WIDTH, DESCRIBE_PADDING)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_pad_to_the_widest_cell_plus_padding() {
        let t = format("NAME\tREADY\tAGE\nweb-1\t1/1\t5s\n", 6, 3);
        assert_eq!(t, "NAME    READY   AGE\nweb-1   1/1     5s\n");
    }

    #[test]
    fn a_line_without_tabs_ends_every_column_block() {
        let t = format(
            "Name:\tweb\nContainers:\n  nginx:\n    Image:\tnginx\n",
            0,
            2,
        );
        assert_eq!(t, "Name:  web\nContainers:\n  nginx:\n    Image:  nginx\n");
    }

    #[test]
    fn the_go_documentation_example_aligns_b_and_c_in_distinct_columns() {
        // From the tabwriter package docs: b and c are in distinct columns.
        let t = format("aaaa\tbbb\td\naa\tb\tdd\na\t\naa\tcccc\teee\n", 0, 1);
        assert_eq!(t, "aaaa bbb d\naa   b   dd\na    \naa   cccc eee\n");
    }

    #[test]
    fn min_width_applies_to_short_columns() {
        assert_eq!(format("IP\tX\n1\tY\n", 6, 3), "IP    X\n1     Y\n");
    }

    #[test]
    fn widths_count_runes_not_bytes() {
        assert_eq!(format("é\tx\nab\ty\n", 0, 1), "é  x\nab y\n");
    }
}
