//! The OpenAPI document, generated from the handlers' annotations and served at
//! `/api/v1/openapi.json`; a test checks every route of the router is in it.

use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

use super::{citizens, jobs, problem, proposals, rules};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Eligibility API",
        description = "Verdicts of the eligibility engine for government welfare schemes: stored results, re-derived evaluations, checks of a given profile, and the rules (docs/api.md)."
    ),
    paths(
        citizens::all_results,
        citizens::one_scheme,
        citizens::evaluate,
        citizens::partial_matches,
        citizens::gaps,
        citizens::check,
        rules::public_rule,
        rules::versions,
        rules::validate,
        rules::simulate,
        rules::conflicts,
        jobs::job,
        proposals::propose,
        proposals::proposal,
        proposals::decide,
    ),
    components(schemas(
        problem::ProblemBody,
        problem::FieldError,
        citizens::UserResults,
        citizens::Summary,
        citizens::SchemeResult,
        citizens::GapItem,
        citizens::CheckRequest,
        citizens::EvaluationQueued,
        rules::RuleVersion,
        rules::Validation,
        rules::ValidationProblem,
        rules::SimulateRequest,
        proposals::ProposeRequest,
        proposals::DecisionRequest,
        proposals::Decision,
    )),
    modifiers(&BearerAuth)
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let mut bearer = Http::new(HttpAuthScheme::Bearer);
        bearer.bearer_format = Some("JWT".into());
        components.add_security_scheme("bearer", SecurityScheme::Http(bearer));
    }
}

/// The document; without the admin routes unless `with_admin` (the public listener's lists
/// none: docs/api.md, "Authentication and roles").
pub fn document(with_admin: bool) -> serde_json::Value {
    let mut document =
        serde_json::to_value(ApiDoc::openapi()).expect("the OpenAPI document serialises");
    if !with_admin && let Some(paths) = document["paths"].as_object_mut() {
        for route in super::routes().into_iter().filter(|r| r.admin) {
            if let Some(methods) = paths.get_mut(route.path).and_then(|p| p.as_object_mut()) {
                methods.remove(&route.method.as_str().to_ascii_lowercase());
                if methods.is_empty() {
                    paths.remove(route.path);
                }
            }
        }
    }
    document
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every route the router serves is documented with its method, and every documented
    /// operation answers with described responses; every schema it references exists.
    #[test]
    fn every_route_is_in_the_document_and_every_reference_resolves() {
        let doc = document(true);
        assert!(
            doc["openapi"]
                .as_str()
                .is_some_and(|v| v.starts_with("3.1")),
            "{}",
            doc["openapi"]
        );
        assert!(doc["info"]["title"].is_string() && doc["info"]["version"].is_string());
        let routes = super::super::routes();
        assert_eq!(routes.len(), 15);
        for route in &routes {
            let method = route.method.as_str().to_lowercase();
            let operation = &doc["paths"][route.path][&method];
            assert!(
                operation.is_object(),
                "{} {} is not documented",
                route.method,
                route.path
            );
            let responses = operation["responses"].as_object().expect("responses");
            assert!(!responses.is_empty(), "{} {}", route.method, route.path);
            for (status, response) in responses {
                assert!(
                    response["description"].is_string(),
                    "{} {} {status}",
                    route.method,
                    route.path
                );
            }
            let public = route.path == "/api/v1/rules/{scheme_id}" && route.method == "GET";
            assert_eq!(
                operation["security"].is_array(),
                !public,
                "{} {}",
                route.method,
                route.path
            );
        }
        let documented: usize = doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .map(|p| p.as_object().unwrap().len())
            .sum();
        assert_eq!(
            documented,
            routes.len(),
            "the document has operations the router does not serve"
        );
        let text = doc.to_string();
        for reference in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
            let name = reference.split('"').next().unwrap();
            assert!(
                doc["components"]["schemas"][name].is_object(),
                "dangling $ref {name}"
            );
        }
        assert_eq!(
            doc["components"]["securitySchemes"]["bearer"]["scheme"],
            "bearer"
        );
    }

    /// The public listener's document lists every route but the admin ones.
    #[test]
    fn the_public_document_lists_no_admin_route() {
        let public = document(false);
        let routes = super::super::routes();
        assert!(routes.iter().filter(|r| r.admin).count() >= 5);
        for route in &routes {
            let method = route.method.as_str().to_lowercase();
            assert_eq!(
                public["paths"][route.path][&method].is_object(),
                !route.admin,
                "{} {}",
                route.method,
                route.path
            );
        }
    }
}
