// A real OpenID Connect provider for the caseworker desk's tests (docs/web.md, "Tests"):
// node-oidc-provider (an OpenID Certified implementation, pinned in package-lock.json) on
// 127.0.0.1, with its development login pages (any user name signs in), one public client (the
// desk: authorization code with PKCE S256) and JWT access tokens for the API's audience that carry
// the API's claims: role `caseworker` and `states`, from the user name
// (`desk-karnataka` → karnataka; `citizen-…` → role citizen; `admin-…` → role admin, for the rules
// console).
//
//   node tools/browser/oidc.mjs PORT REDIRECT_URI[,REDIRECT_URI…] JWKS_OUT
//
// Writes the provider's public signing keys to JWKS_OUT (the API's ELIGIBILITY_API_JWKS_FILE),
// then prints "ready" and serves until killed.
import { generateKeyPairSync, randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import Provider from "oidc-provider";

const [port, redirectUri, jwksOut] = process.argv.slice(2);
if (!port || !redirectUri || !jwksOut) {
  console.error("usage: node oidc.mjs PORT REDIRECT_URI JWKS_OUT");
  process.exit(2);
}
const issuer = `http://127.0.0.1:${port}`;
const RESOURCE = "urn:eligibility:api";
const AUDIENCE = "eligibility-api";

const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const kid = randomUUID();
const signing = { ...privateKey.export({ format: "jwk" }), kid, alg: "RS256", use: "sig" };
const { d, p, q, dp, dq, qi, ...publicKey } = signing;
writeFileSync(jwksOut, JSON.stringify({ keys: [publicKey] }));

// What a user name means to the API.
function apiClaims(accountId) {
  if (accountId.startsWith("citizen-")) return { role: "citizen" };
  if (accountId.startsWith("admin-")) return { role: "admin" };
  return { role: "caseworker", states: [accountId.replace(/^desk-/, "")] };
}

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: "eligibility-desk",
      token_endpoint_auth_method: "none",
      redirect_uris: redirectUri.split(","),
      grant_types: ["authorization_code"],
      response_types: ["code"],
    },
  ],
  jwks: { keys: [signing] },
  cookies: { keys: [randomUUID()] },
  pkce: { required: () => true },
  findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
  // Consent is not the test's subject: every grant the client asks for is given.
  loadExistingGrant: async (ctx) => {
    const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope("openid");
    grant.addResourceScope(RESOURCE, "desk");
    await grant.save();
    return grant;
  },
  features: {
    devInteractions: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => RESOURCE,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: "desk",
        audience: AUDIENCE,
        accessTokenFormat: "jwt",
        accessTokenTTL: 600,
        jwt: { sign: { alg: "RS256" } },
      }),
    },
  },
  extraTokenClaims: async (_ctx, token) => apiClaims(token.accountId),
});
provider.proxy = false;
provider.listen(Number(port), "127.0.0.1", () => console.log("ready"));
