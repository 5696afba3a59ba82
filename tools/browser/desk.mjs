// The caseworker desk in a real headless browser, signed in through a real OpenID Connect
// provider (tools/browser/oidc.mjs). Run by tests/web.rs:
//
//   node tools/browser/desk.mjs BASE_URL OUT_DIR KARNATAKA_USER TAMIL_NADU_USER
//
// Signs in as `desk-karnataka` (a caseworker of Karnataka), reads the Karnataka citizen, asks for
// a re-evaluation, tries the refusals (the Tamil Nadu citizen, posts without or with a wrong CSRF
// token or from another origin, a citizen's account), audits the pages with axe-core, and writes
// OUT_DIR/desk.json for the Rust test to judge.
import { mkdirSync, writeFileSync } from "node:fs";
import { launch, violations } from "./common.mjs";

const [base, out, kaUser, tnUser] = process.argv.slice(2);
if (!base || !out || !kaUser || !tnUser) {
  console.error("usage: node desk.mjs BASE_URL OUT_DIR KARNATAKA_USER TAMIL_NADU_USER");
  process.exit(2);
}
mkdirSync(out, { recursive: true });
const report = { axe: {} };

const browser = await launch();

async function audit(page, name) {
  report.axe[name] = await violations(page);
}

async function signIn(context, login, area = "/desk") {
  const page = await context.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  // axe is injected as a script of the page, which the pages' own policy rightly forbids.
  await page.setBypassCSP(true);
  page.setDefaultTimeout(20000);
  await page.goto(`${base}${area}`, { waitUntil: "load" });
  const atProvider = page.url();
  await page.type('input[name="login"]', login);
  await page.type('input[name="password"]', "any");
  const [response] = await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("button[type=submit]")]);
  return { page, atProvider, status: response?.status() ?? null };
}

const text = (page, selector) => page.$eval(selector, (e) => e.textContent.trim()).catch(() => null);

// A caseworker of Karnataka.
{
  const context = await browser.createBrowserContext();
  const { page, atProvider, status } = await signIn(context, "desk-karnataka");
  report.signIn = { atProvider, landed: page.url(), status, signedInAs: await text(page, "main .meta") };
  report.cookies = (await page.cookies(`${base}/desk`)).map((c) => ({
    name: c.name, httpOnly: c.httpOnly, secure: c.secure, sameSite: c.sameSite, path: c.path,
  }));
  await audit(page, "desk");
  await page.screenshot({ path: `${out}/desk-en.png` });

  await page.type("#user_id", kaUser);
  const [found] = await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("form.filters button")]);
  report.karnataka = {
    status: found.status(),
    h1: await text(page, "h1"),
    verdicts: await page.$$eval("main table:first-of-type tbody tr", (rows) =>
      rows.map((r) => ({
        scheme: r.querySelector("a")?.getAttribute("href")?.split("?")[0],
        cells: [...r.querySelectorAll("td")].map((td) => td.textContent.trim()),
      })),
    ),
    history: await page.$$eval("main table", (tables) => (tables[1] ? tables[1].querySelectorAll("tbody tr").length : 0)),
  };
  await page.screenshot({ path: `${out}/desk-citizen-en.png`, fullPage: true });
  await audit(page, "desk-citizen");

  const csrf = await page.$eval('form[action="/desk/citizen/evaluate"] input[name="csrf"]', (e) => e.value);
  const [queued] = await Promise.all([
    page.waitForNavigation({ waitUntil: "load" }),
    page.click('form[action="/desk/citizen/evaluate"] button'),
  ]);
  report.reevaluate = { status: queued.status(), notice: await text(page, 'p[role="status"]') };

  // Refusals from the page itself: no token, a wrong one.
  report.noCsrf = await page.evaluate(async (user) => (await fetch("/desk/citizen/evaluate", {
    method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: `user_id=${user}`, redirect: "manual",
  })).status, kaUser);
  report.wrongCsrf = await page.evaluate(async (user) => (await fetch("/desk/citizen/evaluate", {
    method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: `user_id=${user}&csrf=AAAA`, redirect: "manual",
  })).status, kaUser);
  // From another origin, with the right token and the session cookie (as a forged cross-site
  // form would carry them if SameSite did not stop it).
  const session = (await page.cookies(`${base}/desk`)).find((c) => c.name === "eligibility_desk").value;
  report.otherOrigin = (await fetch(`${base}/desk/citizen/evaluate`, {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      cookie: `eligibility_desk=${session}`,
      origin: "http://evil.example",
    },
    body: `user_id=${kaUser}&csrf=${csrf}`,
  })).status;

  // A citizen of another state: the same "not found" as no citizen at all.
  const tn = await page.goto(`${base}/desk/citizen?user_id=${tnUser}&lang=en`, { waitUntil: "load" });
  report.tamilNadu = { status: tn.status(), alert: await text(page, 'p[role="alert"]') };
  const none = await page.goto(`${base}/desk/citizen?user_id=nobody-at-all&lang=en`, { waitUntil: "load" });
  report.nobody = { status: none.status(), alert: await text(page, 'p[role="alert"]') };

  // In Hindi.
  await page.goto(`${base}/desk/citizen?user_id=${kaUser}&lang=hi`, { waitUntil: "load" });
  report.hindi = { lang: await page.evaluate(() => document.documentElement.lang), h2: await page.$$eval("h2", (h) => h.map((x) => x.textContent)) };
  await page.screenshot({ path: `${out}/desk-citizen-hi.png` });

  // Signing out clears the session cookie.
  await page.goto(`${base}/desk?lang=en`, { waitUntil: "load" });
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click('form[action="/desk/sign-out"] button')]);
  report.signedOut = {
    at: page.url(),
    cookie: (await page.cookies(`${base}/desk`)).some((c) => c.name === "eligibility_desk"),
  };
  await context.close();
}

// A citizen's account is no caseworker's.
{
  const context = await browser.createBrowserContext();
  const { page, status } = await signIn(context, "citizen-1");
  report.citizenAccount = { status, alert: await text(page, 'p[role="alert"]'), url: page.url() };
  await context.close();
}

// An administrator signs in to the rules console through the same provider (its own redirect
// URL); a caseworker is refused the console.
{
  const context = await browser.createBrowserContext();
  const { page, atProvider, status } = await signIn(context, "admin-policy", "/console");
  report.console = { atProvider, landed: page.url(), status, signedInAs: await text(page, "main .meta") };
  await context.close();
}
{
  const context = await browser.createBrowserContext();
  const { page, status } = await signIn(context, "desk-karnataka", "/console");
  report.consoleCaseworker = { status, alert: await text(page, 'p[role="alert"]') };
  await context.close();
}

await browser.close();
writeFileSync(`${out}/desk.json`, JSON.stringify(report, null, 2));
console.log(`report: ${out}/desk.json`);
