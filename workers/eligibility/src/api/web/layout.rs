//! The page shell every page shares: the language switcher (each language named in its own
//! words, `page.self_name`), the navigation, the footer; the direction of the script
//! (`page.direction`: right-to-left for Urdu); the embedded stylesheet and script.

use explain::Language;
use maud::{DOCTYPE, Markup, html};

/// The pages' stylesheet, compiled in and inlined in each page (nothing is loaded from another
/// host; the policy names it by its hash).
pub const STYLESHEET: &str = include_str!("site.css");
/// The pages' only script: a print button where script runs (the core flow needs none).
pub const SCRIPT: &str = include_str!("page.js");

/// A page: `title`, and `body` inside the shell. `here` is the page's path and query without
/// the language (the switcher links to it in each language).
pub fn page(lang: Language, title: &str, here: &str, body: Markup) -> Markup {
    let joiner = if here.contains('?') { '&' } else { '?' };
    let switcher = html! {
        ul {
            @for other in Language::ALL {
                li {
                    a href=(format!("{here}{joiner}lang={}", other.code()))
                        lang=(other.code()) hreflang=(other.code())
                        aria-current=[(other == lang).then_some("true")] {
                        (other.page("self_name"))
                    }
                }
            }
        }
    };
    shell(lang, title, switcher, body)
}

/// A page reached by posting a form (a screener step): its switcher posts `hidden` (the answers
/// so far) back to `action` with the language chosen (`switch_lang`), so a change of language
/// keeps what was answered.
pub fn posted_page(
    lang: Language,
    title: &str,
    action: &str,
    hidden: Markup,
    body: Markup,
) -> Markup {
    let switcher = html! {
        form.switcher method="post" action=(action) {
            (hidden)
            ul {
                @for other in Language::ALL {
                    li {
                        button.link type="submit" name="switch_lang" value=(other.code())
                            formnovalidate lang=(other.code())
                            aria-current=[(other == lang).then_some("true")] {
                            (other.page("self_name"))
                        }
                    }
                }
            }
        }
    };
    shell(lang, title, switcher, body)
}

/// The shell around `body`, with `switcher` (the languages) in the header.
fn shell(lang: Language, title: &str, switcher: Markup, body: Markup) -> Markup {
    let w = |key| lang.page(key);
    html! {
        (DOCTYPE)
        html lang=(lang.code()) dir=(w("direction")) {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · " (w("site_title")) }
                style { (maud::PreEscaped(STYLESHEET)) }
                script src="/assets/page.js" defer {}
            }
            body {
                a.skip href="#main" { (w("skip_to_content")) }
                header {
                    a.brand href=(with_lang("/", lang)) { (w("site_title")) }
                    nav {
                        a href=(with_lang("/schemes", lang)) { (w("nav_explore")) }
                        a href=(with_lang("/check", lang)) { (w("nav_check")) }
                    }
                    details.languages {
                        summary { (w("language")) ": " (w("self_name")) }
                        (switcher)
                    }
                }
                main id="main" tabindex="-1" {
                    h1 { (title) }
                    (body)
                }
                footer { p { (w("footer")) } }
            }
        }
    }
}

/// `path` with the language: the pages link to each other in the reader's language.
pub fn with_lang(path: &str, lang: Language) -> String {
    let joiner = if path.contains('?') { '&' } else { '?' };
    format!("{path}{joiner}lang={}", lang.code())
}
