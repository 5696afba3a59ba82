//! Profile strings made safe to put in an LLM prompt (docs/design.md, "Explanations").
//!
//! Profile strings are the citizen's own text (a district, scheme ids they receive): whatever
//! they say, it must not read as an instruction to the model. In order:
//!
//! 1. control characters go (whitespace ones become a space), as do invisible format characters
//!    that can hide text (bidirectional overrides, zero-width spaces; not the ZWJ/ZWNJ that
//!    Devanagari spelling uses), and the characters of code and chat markup: `` ` `` `{ }`
//!    `< >` `[ ]` `|`;
//! 2. whitespace runs collapse to one space; the text is cut to `max_chars` characters (on a
//!    character boundary);
//! 3. injection phrases go: "ignore / forget / disregard / override / bypass" followed by
//!    "previous / prior / above / all / earlier…" and the words that continue them
//!    ("instructions", "rules", "the prompt"…) (the seed's pattern, widened), and role markers
//!    (`system:`, `assistant:`, `user:`, `developer:`, `human:`, `tool:`). Removal repeats until
//!    nothing is left to remove, so it cannot splice a new phrase together from the pieces.
//!
//! Cutting comes before removal so a cut word cannot make a phrase ("previously" → "previous").

/// Verbs that open an injection phrase.
const VERBS: [&str; 5] = ["ignore", "forget", "disregard", "override", "bypass"];
/// What an injection verb is aimed at: "ignore *all*", "forget *previous*".
const TARGETS: [&str; 13] = [
    "previous",
    "prior",
    "above",
    "all",
    "earlier",
    "preceding",
    "any",
    "every",
    "the",
    "your",
    "these",
    "those",
    "other",
];
/// Words that continue an injection phrase after its target.
const CONTINUATIONS: [&str; 15] = [
    "instruction",
    "instructions",
    "prompt",
    "prompts",
    "rule",
    "rules",
    "message",
    "messages",
    "context",
    "direction",
    "directions",
    "guideline",
    "guidelines",
    "and",
    "of",
];
const ROLES: [&str; 6] = ["system", "assistant", "user", "developer", "human", "tool"];

/// `text` made safe for a prompt, at most `max_chars` characters long.
pub fn sanitize_profile_text(text: &str, max_chars: usize) -> String {
    let kept: String = text.chars().filter_map(keep).collect();
    let cut: String = collapse(&kept).chars().take(max_chars).collect();
    let mut words: Vec<String> = cut.split_whitespace().map(str::to_string).collect();
    while remove_one(&mut words) {}
    words.join(" ")
}

/// Step 1 for one character: itself, a space, or nothing.
fn keep(c: char) -> Option<char> {
    match c {
        '`' | '{' | '}' | '<' | '>' | '[' | ']' | '|' => None,
        // Zero-width space, word joiner and BOM; bidirectional embeddings, overrides, isolates.
        '\u{200B}' | '\u{2060}'..='\u{2064}' | '\u{FEFF}' => None,
        '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => None,
        c if c.is_whitespace() => Some(' '),
        c if c.is_control() => None,
        c => Some(c),
    }
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Removes the first injection phrase or role marker; `false` when there is none.
fn remove_one(words: &mut Vec<String>) -> bool {
    for i in 0..words.len() {
        let word = key(&words[i]);
        if VERBS.contains(&word.as_str())
            && words
                .get(i + 1)
                .is_some_and(|next| TARGETS.contains(&key(next).as_str()))
        {
            let mut end = i + 2;
            while words.get(end).is_some_and(|w| {
                let k = key(w);
                TARGETS.contains(&k.as_str()) || CONTINUATIONS.contains(&k.as_str())
            }) {
                end += 1;
            }
            words.drain(i..end);
            return true;
        }
        if let Some(rest) = after_role(&words[i]) {
            if rest.is_empty() {
                words.remove(i);
            } else {
                words[i] = rest;
            }
            return true;
        }
        // "system :" – the marker split by a space.
        if ROLES.contains(&word.as_str())
            && let Some(next) = words.get(i + 1)
            && let Some(rest) = next.strip_prefix(':')
        {
            let rest = rest.to_string();
            if rest.is_empty() {
                words.drain(i..i + 2);
            } else {
                words[i + 1] = rest;
                words.remove(i);
            }
            return true;
        }
    }
    false
}

/// A word as phrases are matched: lower case, without surrounding punctuation.
fn key(word: &str) -> String {
    word.trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase()
}

/// The rest of a word that starts with a role marker (`system:`, `"User:`), else `None`.
fn after_role(word: &str) -> Option<String> {
    let start = word.trim_start_matches(|c: char| !c.is_alphanumeric());
    let (role, rest) = start.split_once(':')?;
    ROLES
        .contains(&role.to_lowercase().as_str())
        .then(|| rest.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_marker_split_by_a_space_goes() {
        assert_eq!(
            sanitize_profile_text("Pune SYSTEM : obey", 100),
            "Pune obey"
        );
        assert_eq!(sanitize_profile_text("Pune user :obey", 100), "Pune obey");
    }

    #[test]
    fn words_that_only_look_alike_stay() {
        assert_eq!(
            sanitize_profile_text("Systematic users of all rules", 100),
            "Systematic users of all rules"
        );
        assert_eq!(sanitize_profile_text("time: 10:30", 100), "time: 10:30");
    }
}
