//! Widgets rendered into a plain Buffer.

use heaptui_tui::panes::dominators::{Bar, RetainedChart};
use heaptui_tui::theme::Theme;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

fn row(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect()
}

fn bars() -> Vec<Bar> {
    vec![
        Bar {
            label: "A".into(),
            bytes: 600,
            selected: false,
            levels: Vec::new(),
        },
        Bar {
            label: "B".into(),
            bytes: 300,
            selected: true,
            levels: Vec::new(),
        },
        Bar {
            label: "C".into(),
            bytes: 1,
            selected: false,
            levels: Vec::new(),
        },
    ]
}

#[test]
fn chart_bars_are_proportional_and_the_selection_is_marked() {
    let theme = Theme {
        ascii: true,
        colors: heaptui_tui::theme::Colors::Mono,
    };
    let bars = bars();
    let mut buf = Buffer::empty(Rect::new(0, 0, 43, 5));
    RetainedChart {
        title: "Retained by X".into(),
        total: 1000,
        reachable: 2000,
        bars: &bars,
        theme: &theme,
    }
    .render(buf.area, &mut buf);
    // The zoom root is half the heap: the title says so, and the bars'
    // percentages are shares of the root, the scale the bars are drawn on.
    assert!(
        row(&buf, 0).starts_with(" Retained by X (1000 B, 50.0% of the heap)"),
        "{}",
        row(&buf, 0)
    );
    // label column 21 wide (1/2) + marker + space; bar width 43 - 24 = 19
    let hashes = |y| row(&buf, y).matches('#').count();
    assert_eq!(hashes(1), 12, "{}", row(&buf, 1)); // 600/1000 of 19 cells
    assert_eq!(hashes(2), 6, "5.7 cells round up in ASCII");
    assert_eq!(hashes(3), 0);
    assert_eq!(
        buf[(23, 3)].symbol(),
        ".",
        "a share below one cell still shows a dot"
    );
    assert!(
        row(&buf, 2).starts_with(">B 300 B 30.0%"),
        "{}",
        row(&buf, 2)
    );
    assert!(buf[(0, 2)]
        .modifier
        .contains(ratatui::style::Modifier::REVERSED));
    assert!(row(&buf, 1).starts_with(" A 600 B 60.0%"));
    assert_eq!(row(&buf, 4).trim(), "", "no bar past the data");
}

#[test]
fn unicode_bars_use_eighth_blocks() {
    let theme = Theme {
        ascii: false,
        colors: heaptui_tui::theme::Colors::Ansi16,
    };
    assert_eq!(theme.bar(8 * 3 + 4), "███▌");
    assert_eq!(theme.bar(1), "▏");
    assert_eq!(theme.bar(0), "");
    let ascii = Theme {
        ascii: true,
        colors: heaptui_tui::theme::Colors::Ansi16,
    };
    assert_eq!(ascii.bar(8 * 3 + 4), "####");
}

#[test]
fn chart_fits_a_tiny_area() {
    let theme = Theme {
        ascii: false,
        colors: heaptui_tui::theme::Colors::Ansi16,
    };
    let bars = bars();
    let mut buf = Buffer::empty(Rect::new(0, 0, 12, 2));
    RetainedChart {
        title: "Retained by a long name".into(),
        total: 1000,
        reachable: 1000,
        bars: &bars,
        theme: &theme,
    }
    .render(buf.area, &mut buf);
    assert!(row(&buf, 0).ends_with('…'), "{}", row(&buf, 0));
    // One row: scrolled to the selected bar.
    assert!(row(&buf, 1).starts_with(">B"), "{}", row(&buf, 1));
}

#[test]
fn a_long_chart_label_is_shortened_before_its_size_and_percent() {
    let theme = Theme {
        ascii: true,
        colors: heaptui_tui::theme::Colors::Mono,
    };
    let bars = vec![Bar {
        label: "MyCompany.Product.Caching.LargeObjectCache".into(),
        bytes: 0xff_e000_0000,
        selected: false,
        levels: Vec::new(),
    }];
    let mut buf = Buffer::empty(Rect::new(0, 0, 60, 2));
    RetainedChart {
        title: "Retained by all roots".into(),
        total: 0xff_e000_0000,
        reachable: 0xff_e000_0000,
        bars: &bars,
        theme: &theme,
    }
    .render(buf.area, &mut buf);
    // Label column: 30 cells (1/2 of 60) after the marker.
    let r = row(&buf, 1);
    assert_eq!(&r[..32], " MyCompan... 1023.50 GiB 100.0% ", "{r}");
}
