//! The LLM prompt: a system message that fixes the task, a user message of facts only.

mod support;

use explain::{KEY_FACTS, Language, Role, facts, key_facts, prompt};
use serde_json::json;
use support::{catalogue, evaluation, profile, rule};

#[test]
fn the_prompt_is_the_task_then_the_facts_only() {
    let profile = profile(json!({
        "user_id": "citizen-42",
        "demographics": {"state": "karnataka", "district": "Mysuru"},
        "identity": {"age": 68, "verified_documents": ["aadhaar"]},
        "economic": {"bpl_status": true, "is_government_employee": false},
        "eligibility": {"active_schemes": []}
    }));
    let evaluation = evaluation(rule("rule_ka_oap_001"), &profile, "2026-01-10");
    for language in Language::ALL {
        let facts = facts(&evaluation, catalogue(), language);
        let messages = prompt(&facts);
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[0].role, Role::System);
        assert_eq!(messages[1].role, Role::User);

        let system = &messages[0].content;
        assert!(system.contains("Repeat them to the citizen word for word"));
        assert!(system.contains(language.name()));

        // One line per key fact, and nothing else: no profile JSON, no id, no field the rule
        // does not read. An eligible citizen hears the verdict, the amount, then its kind.
        let texts = facts.texts();
        let key = key_facts(&facts);
        assert_eq!(key.len(), KEY_FACTS);
        assert_eq!(key[0], texts[0], "{language}: the verdict first");
        assert!(key.iter().all(|k| texts.iter().any(|t| t == k)));
        assert_eq!(messages[1].content, key.join("\n"));
        // Room to repeat the key facts once, even at a token per byte, and not much more.
        let budget = explain::max_tokens(&facts) as usize;
        let bytes = messages[1].content.len();
        assert!(
            budget > bytes && budget <= (bytes + 128).max(128),
            "{language}: {budget} for {bytes} bytes"
        );
        for absent in ["{", "citizen-42", "Mysuru", "user_id"] {
            assert!(!messages[1].content.contains(absent), "{absent}");
        }
    }
}

#[test]
fn messages_serialise_as_chat_messages() {
    let message = explain::ChatMessage {
        role: Role::System,
        content: "x".into(),
    };
    assert_eq!(
        serde_json::to_value(&message).unwrap(),
        json!({"role": "system", "content": "x"})
    );
}
