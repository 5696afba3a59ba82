//! Normalisation shared by every rule: Unicode lower-case, whitespace runs
//! collapsed to one ASCII space, trimmed.

/// Normalises `text` (used for facts and patterns, where no offsets are needed).
pub(crate) fn normalise(text: &str) -> String {
    collapse(&text.to_lowercase())
}

fn collapse(lowered: &str) -> String {
    let mut out = String::with_capacity(lowered.len());
    for word in lowered.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// A normalised text that remembers, for each of its bytes, the byte offset in
/// the original text of the character it came from, so evidence can point into
/// the candidate output exactly as it was given.
#[derive(Debug)]
pub(crate) struct Normalised {
    text: String,
    origin: Vec<usize>,
}

impl Normalised {
    pub(crate) fn new(source: &str) -> Self {
        // `str::to_lowercase` handles the context-dependent final sigma, which
        // `char::to_lowercase` does not; the two only differ in choosing σ or ς,
        // both two bytes long, so per-char lengths still give the exact origin map.
        let lowered = source.to_lowercase();
        let mut lowered_origin = Vec::with_capacity(lowered.len());
        for (offset, c) in source.char_indices() {
            let len: usize = c.to_lowercase().map(char::len_utf8).sum();
            lowered_origin.extend(std::iter::repeat_n(offset, len));
        }
        debug_assert_eq!(lowered_origin.len(), lowered.len());

        let mut text = String::with_capacity(lowered.len());
        let mut origin = Vec::with_capacity(lowered.len());
        let mut pending_space: Option<usize> = None;
        for (i, c) in lowered.char_indices() {
            if c.is_whitespace() {
                pending_space.get_or_insert(lowered_origin[i]);
                continue;
            }
            if let Some(space_origin) = pending_space.take()
                && !text.is_empty()
            {
                text.push(' ');
                origin.push(space_origin);
            }
            text.push(c);
            origin.extend(std::iter::repeat_n(lowered_origin[i], c.len_utf8()));
        }
        Self { text, origin }
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// Byte offset in the original text of the character behind normalised byte `at`.
    pub(crate) fn origin(&self, at: usize) -> usize {
        self.origin[at]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lowercases_collapses_and_trims() {
        assert_eq!(normalise("  Your\tAGE \n\n is   68.  "), "your age is 68.");
        assert_eq!(normalise(" \u{00A0}\u{2003} "), "");
    }

    #[test]
    fn devanagari_is_untouched_and_latin_in_it_is_folded() {
        assert_eq!(normalise("आपकी  आयु 68 है। PENSION"), "आपकी आयु 68 है। pension");
    }

    #[test]
    fn final_sigma_follows_str_lowercase() {
        assert_eq!(normalise("ΟΔΟΣ"), "οδος");
        assert_eq!(Normalised::new("ΟΔΟΣ").as_str(), "οδος");
    }

    #[test]
    fn origin_points_into_the_source() {
        // 'İ' (2 bytes) lower-cases to "i̇" (3 bytes); the collapsed run of
        // spaces maps to its first space.
        let source = "  İs   Valid";
        let n = Normalised::new(source);
        assert_eq!(n.as_str(), "i\u{307}s valid");
        assert_eq!(n.origin(0), 2);
        assert_eq!(n.origin(1), 2);
        assert_eq!(n.origin(3), 4);
        assert_eq!(n.origin(4), 5);
        let valid = n.as_str().find("valid").unwrap();
        assert_eq!(&source[n.origin(valid)..], "Valid");
    }

    proptest! {
        #[test]
        fn mapped_and_plain_normalisation_agree(s in "\\PC{0,40}|[ \\tΣσA-Za-zİ.]{0,40}") {
            let n = Normalised::new(&s);
            prop_assert_eq!(n.as_str(), normalise(&s));
            prop_assert_eq!(n.origin.len(), n.text.len());
            for (i, _) in n.as_str().char_indices() {
                prop_assert!(s.is_char_boundary(n.origin(i)));
            }
        }
    }
}
