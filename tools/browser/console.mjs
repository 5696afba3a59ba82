// The rules console in a real headless browser, on the real local stack. Run by tests/web.rs:
//
//   node tools/browser/console.mjs BASE_URL OUT_DIR SCHEME_ID
//
// Admin `console-a` (the development sign-in) drafts the scheme's next version in the form: a
// condition's field changed so that its value no longer fits (a validation problem, shown at its
// place), then fixed (the age raised to 65) and proposed; the impact is awaited and read; the
// author's own approval is refused. Admin `console-b` approves it by keyboard alone. Then the
// release and the re-evaluation it caused are awaited on the releases pages. Every kind of page
// is audited with axe-core; screenshots go to OUT_DIR; OUT_DIR/console.json is the report the
// Rust test judges.
import { mkdirSync, writeFileSync } from "node:fs";
import { launch, violations } from "./common.mjs";

const [base, out, scheme] = process.argv.slice(2);
if (!base || !out || !scheme) {
  console.error("usage: node console.mjs BASE_URL OUT_DIR SCHEME_ID");
  process.exit(2);
}
mkdirSync(out, { recursive: true });
const report = { axe: {} };
const save = () => writeFileSync(`${out}/console.json`, JSON.stringify(report, null, 2));
save();

const browser = await launch();

async function audit(page, name) {
  report.axe[name] = await violations(page);
}

const text = (page, selector) => page.$eval(selector, (e) => e.textContent.trim()).catch(() => null);
const submit = async (page, selector) => {
  try {
    const [response] = await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click(selector)]);
    return response?.status() ?? null;
  } catch (e) {
    // Where it stuck, for the Rust test's message: the page, and any input the browser holds
    // invalid (which keeps a form from being sent).
    report.stuck = {
      selector,
      url: page.url(),
      invalid: await page.$$eval(":invalid", (inputs) => inputs.map((i) => `${i.name}=${i.value}`)).catch(() => null),
    };
    save();
    throw e;
  }
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Reloads `url` until `ready(page)` holds (at most `seconds`).
async function until(page, url, seconds, ready) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    await page.goto(url, { waitUntil: "load" });
    if (await ready(page)) return true;
    if (Date.now() > deadline) return false;
    await sleep(1000);
  }
}

async function signIn(name) {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport({ width: 1400, height: 1000 });
  await page.setBypassCSP(true); // axe runs as a script of the page
  page.setDefaultTimeout(20000);
  await page.goto(`${base}/console`, { waitUntil: "load" });
  const at = new URL(page.url()).pathname;
  await page.type("#subject", name);
  await submit(page, "form button[type=submit]");
  return { context, page, at };
}

// The author drafts, breaks, fixes and proposes.
const a = await signIn("console-a");
report.signIn = { at: a.at, signedInAs: await text(a.page, "main .meta") };
report.cookies = (await a.page.cookies(`${base}/console`)).map((c) => ({
  name: c.name, httpOnly: c.httpOnly, secure: c.secure, sameSite: c.sameSite, path: c.path,
}));
await audit(a.page, "console");
await a.page.goto(`${base}/console/draft?scheme=${scheme}`, { waitUntil: "load" });
await audit(a.page, "draft");
// The age condition's place (its pointer), from the form.
const age = await a.page.$$eval("select[name$='/field']", (selects) =>
  selects.filter((s) => s.value === "identity.age" && s.name.startsWith("f:/eligibility/")).map((s) => s.name.slice(2, -"/field".length))[0],
);
report.agePointer = age;
// Checked as it is typed (the page's script posts the form to the live check), under the pages'
// own security policy (this page does not bypass it): an operator the field does not take is
// named at its place without a post, and the problem goes when it is put back.
{
  const strict = await a.context.newPage();
  await strict.setViewport({ width: 1400, height: 1000 });
  strict.setDefaultTimeout(20000);
  await strict.evaluateOnNewDocument(() => {
    window.__violations = [];
    document.addEventListener("securitypolicyviolation", (e) => window.__violations.push(e.violatedDirective));
  });
  await strict.goto(`${base}/console/draft?scheme=${scheme}`, { waitUntil: "load" });
  const place = `e:${age}/operator`;
  await strict.select(`select[name='f:${age}/operator']`, "contains");
  const shown = await strict
    .waitForFunction((id) => document.getElementById(id)?.textContent, { timeout: 15000 }, place)
    .then((h) => h.jsonValue())
    .catch(() => null);
  const status = await text(strict, "[data-live-status]");
  await strict.select(`select[name='f:${age}/operator']`, "gte");
  const cleared = await strict
    .waitForFunction((id) => !document.getElementById(id), { timeout: 15000 }, place)
    .then(() => true)
    .catch(() => false);
  report.live = {
    shown,
    status,
    cleared,
    statusAfter: await text(strict, "[data-live-status]"),
    violations: await strict.evaluate(() => window.__violations),
    url: new URL(strict.url()).pathname,
  };
  await strict.close();
  save();
}
await a.page.select(`select[name='f:${age}/field']`, "identity.gender");
report.broken = { status: await submit(a.page, "button[value=check]") };
report.broken.problems = await a.page.$$eval(".problems li", (items) => items.map((li) => li.textContent.trim()));
report.broken.atPlace = await a.page.$$eval(`[id^='e:${age}/']`, (errors) => errors.map((e) => ({ id: e.id, text: e.textContent.trim() })));
report.broken.invalid = await a.page.$$eval("[aria-invalid=true]", (inputs) => inputs.map((i) => i.name));
await a.page.screenshot({ path: `${out}/console-draft-problem.png`, fullPage: false });
// Fixed: the age again, and 65.
await a.page.select(`select[name='f:${age}/field']`, "identity.age");
await a.page.$eval(`input[name='f:${age}/value']`, (input) => { input.value = ""; });
await a.page.type(`input[name='f:${age}/value']`, "65");
report.fixed = { status: await submit(a.page, "button[value=check]") };
report.fixed.problems = await a.page.$eval("[data-problems]", (e) => e.dataset.problems);
report.fixed.yamlHas65 = (await a.page.$eval("textarea[name=yaml]", (t) => t.value)).includes("value: 65");
await a.page.type("#reason", "Age raised to 65 (browser test)");
report.proposed = { status: await submit(a.page, "button[value=propose]"), at: new URL(a.page.url()).pathname };
const proposal = report.proposed.at;
save();

// The impact, computed off the request path.
const impactReady = await until(a.page, `${base}${proposal}`, 90, (p) => p.$("#transitions").then(Boolean));
report.impact = {
  ready: impactReady,
  changes: await a.page.$$eval("ul.changes li", (items) => items.map((li) => li.textContent.trim())),
  transitions: await a.page.$$eval("#transitions tbody tr", (rows) => rows.map((r) => [...r.children].map((c) => c.textContent.trim()))),
  outlay: await a.page.$$eval("#outlay tbody tr", (rows) => rows.map((r) => [...r.children].map((c) => c.textContent.trim()))),
  svgBars: await a.page.$$eval("#transitions svg rect", (rects) => rects.length),
};
await a.page.screenshot({ path: `${out}/console-impact.png`, fullPage: true });
await audit(a.page, "proposal");
// The author's own approval: refused.
await a.page.type("#reason", "I approve my own change");
report.ownApproval = { status: await submit(a.page, "button[value=approve]") };
report.ownApproval.alert = await text(a.page, "main p.error[role=alert]");
report.ownApproval.state = await a.page.$eval("[data-status]", (e) => e.dataset.status);
save();

// A second admin approves by keyboard alone.
const b = await signIn("console-b");
await b.page.goto(`${base}${proposal}`, { waitUntil: "load" });
let presses = 0;
while (presses < 200 && (await b.page.evaluate(() => document.activeElement?.id)) !== "reason") {
  await b.page.keyboard.press("Tab");
  presses += 1;
}
await b.page.keyboard.type("Checked the impact: reviewed (browser test)");
await b.page.keyboard.press("Tab");
const focused = await b.page.evaluate(() => document.activeElement?.value);
const [approved] = await Promise.all([b.page.waitForNavigation({ waitUntil: "load" }), b.page.keyboard.press("Enter")]);
report.keyboard = { presses, focused, status: approved?.status() ?? null };
report.keyboard.state = await b.page.$eval("[data-status]", (e) => e.dataset.status);
save();

// The release, and the re-evaluation it caused.
const released = await until(b.page, `${base}/console/releases`, 90, (p) =>
  p.$$eval("main table a", (links, s) => links.some((l) => l.href.includes(`/console/releases/`) && l.closest("tr").textContent.includes(s)), "console-b"),
);
report.releases = {
  listed: released,
  rows: await b.page.$$eval("main table tbody tr", (rows) => rows.slice(0, 3).map((r) => [...r.children].map((c) => c.textContent.trim()))),
};
await audit(b.page, "releases");
const link = await b.page.$$eval("main table tbody tr", (rows) =>
  rows.filter((r) => r.textContent.includes("console-b")).map((r) => r.querySelector("a").getAttribute("href"))[0],
);
report.releases.link = link;
const reevaluated = await until(b.page, `${base}${link}`, 90, (p) =>
  p.$eval("[data-reevaluated]", (e) => Number(e.dataset.reevaluated)).then((n) => n >= 12).catch(() => false),
);
report.release = {
  ready: reevaluated,
  h1: await text(b.page, "h1"),
  summary: await text(b.page, "[data-reevaluated]"),
  rows: await b.page.$$eval("#reevaluation tbody tr", (rows) => rows.map((r) => [...r.children].map((c) => c.textContent.trim()))),
};
await b.page.screenshot({ path: `${out}/console-release.png`, fullPage: true });
await audit(b.page, "release");
save();
await browser.close();
