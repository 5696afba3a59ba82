//! Synthetic scheme corpora and citizens, for the benchmarks and for a population diff over a
//! synthetic population (`eligibility rules simulate --synthetic N`).
//!
//! - [`corpus`]: scheme corpora of any size over all 36 states/UTs and central schemes, as rule
//!   documents that go through the engine's real loader.
//! - [`citizens`]: citizens with realistic distributions (state populations, age, log-normal
//!   income, social categories, documents), as profile JSON, and the synthetic corpus loaded.
//!
//! Deterministic: the same seed gives the same corpus and citizens.

pub mod citizens;
pub mod corpus;

/// All 36 states and union territories, as `demographics.state` spells them.
pub const STATES: [&str; 36] = [
    "andaman_and_nicobar_islands",
    "andhra_pradesh",
    "arunachal_pradesh",
    "assam",
    "bihar",
    "chandigarh",
    "chhattisgarh",
    "dadra_and_nagar_haveli_and_daman_and_diu",
    "delhi",
    "goa",
    "gujarat",
    "haryana",
    "himachal_pradesh",
    "jammu_and_kashmir",
    "jharkhand",
    "karnataka",
    "kerala",
    "ladakh",
    "lakshadweep",
    "madhya_pradesh",
    "maharashtra",
    "manipur",
    "meghalaya",
    "mizoram",
    "nagaland",
    "odisha",
    "puducherry",
    "punjab",
    "rajasthan",
    "sikkim",
    "tamil_nadu",
    "telangana",
    "tripura",
    "uttar_pradesh",
    "uttarakhand",
    "west_bengal",
];

/// Approximate population in lakhs (Census 2011), same order as [`STATES`]: citizens are drawn
/// by these weights.
pub const STATE_POPULATION_LAKHS: [u32; 36] = [
    4, 494, 14, 312, 1041, 11, 255, 6, 168, 15, 604, 254, 69, 125, 330, 611, 334, 3, 1, 726, 1124,
    29, 30, 11, 20, 420, 12, 277, 685, 6, 721, 351, 37, 1998, 101, 913,
];
