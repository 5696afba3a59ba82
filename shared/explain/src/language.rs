//! The languages explanations are written in.

use serde::{Deserialize, Serialize};

use crate::english::English;
use crate::hindi::Hindi;
use crate::phrasing::Phrasing;

/// A language of facts and explanations (ISO 639-1 codes: `en`, `hi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    En,
    /// Hindi, in Devanagari; numbers keep ASCII digits and Indian grouping.
    Hi,
}

impl Language {
    pub const ALL: [Language; 2] = [Language::En, Language::Hi];

    /// The name an LLM is told to write in.
    pub fn name(self) -> &'static str {
        match self {
            Language::En => "English",
            Language::Hi => "Hindi (Devanagari script)",
        }
    }

    pub(crate) fn phrasing(self) -> &'static dyn Phrasing {
        match self {
            Language::En => &English,
            Language::Hi => &Hindi,
        }
    }
}
