//! The scrolled list every list pane uses: the selected row and the first
//! visible row, kept consistent with a height.

/// A scrolled list: the selected row and the first visible row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListState {
    pub selected: usize,
    pub offset: usize,
}

impl ListState {
    /// Moves by `delta` rows within `len`, keeping the selection among the
    /// `height` visible rows.
    pub fn step(&mut self, delta: isize, len: usize, height: usize) {
        if len == 0 {
            *self = ListState::default();
            return;
        }
        let s = (self.selected as isize + delta).clamp(0, len as isize - 1);
        self.selected = s as usize;
        self.scroll(len, height);
    }

    pub fn scroll(&mut self, len: usize, height: usize) {
        self.selected = self.selected.min(len.saturating_sub(1));
        let height = height.max(1);
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + height {
            self.offset = self.selected + 1 - height;
        }
        self.offset = self.offset.min(len.saturating_sub(height));
    }
}

#[cfg(test)]
mod tests {
    use super::ListState;

    #[test]
    fn list_state_scrolls_with_the_selection() {
        let mut l = ListState::default();
        l.step(5, 10, 3);
        assert_eq!((l.selected, l.offset), (5, 3));
        l.step(100, 10, 3);
        assert_eq!((l.selected, l.offset), (9, 7));
        l.step(-9, 10, 3);
        assert_eq!((l.selected, l.offset), (0, 0));
        l.step(1, 0, 3);
        assert_eq!(l, ListState::default());
    }
}
