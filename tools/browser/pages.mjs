// The web pages in a real headless browser (docs/web.md, "Tests"): Debian's Chromium driven over
// the DevTools protocol by puppeteer-core. Run by tests/web.rs against a running
// `eligibility api serve` whose database holds the bundled corpus:
//
//   node tools/browser/pages.mjs BASE_URL OUT_DIR
//
// It screens one citizen in English, Hindi and Urdu (asking until the screener has no question
// left), browses the explorer, walks the first screener page by keyboard alone, audits every page
// kind with axe-core, measures a screener page's weight and first paint under a slow 3G profile,
// saves a screenshot of each page in OUT_DIR and writes OUT_DIR/report.json. Its exit code is 0
// when it could do all that; the Rust test judges the report.
import { mkdirSync, writeFileSync } from "node:fs";
import { launch, violations } from "./common.mjs";

const [base, out] = process.argv.slice(2);
if (!base || !out) {
  console.error("usage: node pages.mjs BASE_URL OUT_DIR");
  process.exit(2);
}
mkdirSync(out, { recursive: true });

// The citizen every screening describes: a 67-year-old widow in Bihar, on the BPL list, with a
// verified Aadhaar card and bank passbook. Any other question: "no" to yes/no questions, nothing
// ticked in a list, the first choice of a menu, 0 for a number; or skipped where marked.
const CITIZEN = {
  "identity.marital_status": "widowed",
  "economic.bpl_status": "true",
  "economic.has_bank_account": "true",
  "economic.annual_income": "60000",
  "economic.monthly_income": "5000",
  "identity.verified_documents": ["aadhaar", "bank_passbook", "bpl_card"],
  "identity.disability_percentage": "0",
};
const SKIPPED = new Set(["identity.date_of_birth"]);

// WebPageTest's "3G Slow" profile (400 ms round trip, 400 kbit/s each way), and DevTools'
// "Slow 3G" preset (its 2 s round trip includes the packet-level factor of 5).
const SLOW_3G = { latency: 400, downloadThroughput: (400 * 1000) / 8, uploadThroughput: (400 * 1000) / 8 };
const DEVTOOLS_SLOW_3G = { latency: 2000, downloadThroughput: (500 * 1000 * 0.8) / 8, uploadThroughput: (500 * 1000 * 0.8) / 8 };

const report = { screenings: {}, explorer: {}, keyboard: {}, axe: {}, budgets: {}, csp: {}, screenshots: [] };

const browser = await launch();

async function newPage({ phone = true, bypassCsp = true } = {}) {
  const page = await browser.newPage();
  await page.setViewport(phone ? { width: 360, height: 740, deviceScaleFactor: 1 } : { width: 1280, height: 900 });
  // axe is injected as a script of the page, which the pages' own policy rightly forbids.
  await page.setBypassCSP(bypassCsp);
  page.setDefaultTimeout(20000);
  return page;
}

async function shot(page, name) {
  const file = `${out}/${name}.png`;
  await page.screenshot({ path: file, fullPage: true });
  report.screenshots.push(file);
  // What a phone shows first, for the README.
  const top = `${out}/${name}-top.png`;
  await page.screenshot({ path: top });
  report.screenshots.push(top);
}

async function audit(page, name) {
  report.axe[name] = await violations(page);
}

async function submit(page, selector) {
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click(selector)]);
}

async function pageInfo(page) {
  return page.evaluate(() => ({
    lang: document.documentElement.lang,
    dir: document.documentElement.dir,
    h1: document.querySelector("h1")?.textContent ?? "",
  }));
}

// One screening, to the end.
async function screen(lang) {
  const page = await newPage();
  await page.goto(`${base}/check?lang=${lang}`, { waitUntil: "load" });
  const first = await pageInfo(page);
  await shot(page, `screener-first-${lang}`);
  if (lang === "en") await audit(page, "screener-first");
  await page.select("#demographics-state", "bihar");
  await page.type("#identity-age", "67");
  await page.click('input[name="a.identity.gender"][value="female"]');
  await submit(page, 'button[value="next"]');
  const asked = ["demographics.state", "identity.age", "identity.gender"];
  let audited = false;
  for (let step = 0; step < 80; step++) {
    if (await page.$("section.group")) break;
    const field = await page.$eval('input[name="asked"]', (e) => e.value);
    asked.push(field);
    if (!audited && lang === "en") {
      await shot(page, "screener-question-en");
      await audit(page, "screener-question");
      audited = true;
      // The switcher keeps the answers: to Hindi and back, the same question, the age kept.
      const switchTo = async (code) => {
        await page.click("details.languages summary");
        await submit(page, `button[name="switch_lang"][value="${code}"]`);
        return page.evaluate(() => ({
          lang: document.documentElement.lang,
          asked: document.querySelector('input[name="asked"]')?.value ?? null,
          age: document.querySelector('input[name="a.identity.age"]')?.value ?? null,
          error: document.querySelector(".error")?.textContent ?? null,
        }));
      };
      report.switched = { to: await switchTo("hi"), back: await switchTo("en"), asked: field };
    }
    if (SKIPPED.has(field)) {
      await submit(page, 'button[value="skip"]');
      continue;
    }
    const name = `a.${field}`;
    const want = CITIZEN[field];
    const kind = await page.evaluate((name) => {
      const el = document.querySelector(`[name="${CSS.escape(name)}"]:not([type=hidden])`);
      return el ? (el.tagName === "SELECT" ? "select" : el.type) : "none";
    }, name);
    if (kind === "checkbox") {
      let ticked = 0;
      for (const value of want ?? []) {
        const box = await page.$(`input[name="${name}"][value="${value}"]`);
        if (box) {
          await box.click();
          ticked++;
        }
      }
      // Nothing of hers among the choices: "none of these" (nothing ticked is no answer).
      if (ticked === 0) await page.click(`input[name="${name}"][value="-"]`);
    } else if (kind === "radio") {
      const value = want ?? (await page.$(`input[name="${name}"][value="false"]`) ? "false" : null);
      const radio = value
        ? await page.$(`input[name="${name}"][value="${value}"]`)
        : await page.$(`input[name="${name}"]`);
      await radio.click();
    } else if (kind === "select") {
      const value = want ?? (await page.$$eval(`select[name="${name}"] option`, (o) => o[1]?.value));
      await page.select(`select[name="${name}"]`, value);
    } else if (kind !== "none") {
      await page.type(`[name="${name}"]:not([type=hidden])`, want ?? "0");
    }
    await submit(page, 'button[value="next"]');
  }
  const results = await page.evaluate(() =>
    [...document.querySelectorAll("section.group")].map((s) => ({
      group: s.className.replace("group ", ""),
      schemes: [...s.querySelectorAll("ul.schemes > li > a")].map((a) => a.getAttribute("href").split("?")[0]),
    })),
  );
  const last = await pageInfo(page);
  // The results page as served (it came by POST, so its bytes are its HTML's).
  last.bytes = await page.evaluate(() => new Blob(["<!DOCTYPE html>" + document.documentElement.outerHTML]).size);
  await shot(page, `screener-results-${lang}`);
  if (lang === "en") await audit(page, "screener-results");
  report.screenings[lang] = { first, last, asked, results };
  await page.close();
}

for (const lang of ["en", "hi", "ur"]) await screen(lang);

// The explorer: filter by state, open a scheme, in English and Hindi.
{
  const page = await newPage({ phone: false });
  await page.goto(`${base}/schemes?lang=en`, { waitUntil: "load" });
  await page.select("#state", "karnataka");
  await page.select("#kind", "pension");
  await submit(page, "form.filters button");
  const listed = await page.$$eval("ul.schemes > li > a", (a) => a.map((x) => x.getAttribute("href").split("?")[0]));
  await shot(page, "explorer-list-en");
  await audit(page, "explorer-list");
  await submit(page, 'a[href^="/schemes/sch_ka_old_age_pension"]');
  const scheme = await page.evaluate(() => ({
    h1: document.querySelector("h1").textContent,
    headings: [...document.querySelectorAll("h2")].map((h) => h.textContent),
    conditions: [...document.querySelectorAll(".tree li")].map((li) => li.textContent),
  }));
  await shot(page, "explorer-scheme-en");
  await audit(page, "explorer-scheme");
  await page.goto(`${base}/schemes/sch_ka_old_age_pension?lang=hi`, { waitUntil: "load" });
  const hindi = await pageInfo(page);
  hindi.conditions = await page.$$eval(".tree li", (li) => li.map((x) => x.textContent));
  await shot(page, "explorer-scheme-hi");
  await page.goto(`${base}/schemes/sch_ka_old_age_pension?lang=ur`, { waitUntil: "load" });
  const urdu = await pageInfo(page);
  await shot(page, "explorer-scheme-ur");
  await audit(page, "explorer-scheme-ur");
  await page.goto(`${base}/?lang=en`, { waitUntil: "load" });
  await audit(page, "home");
  report.explorer = { listed, scheme, hindi, urdu };
  await page.close();
}

// Keyboard only: skip link, then the first screener page by Tab, arrows, typing and Enter.
{
  const page = await newPage();
  await page.goto(`${base}/check?lang=en`, { waitUntil: "load" });
  const focused = () => page.evaluate(() => document.activeElement?.id || document.activeElement?.className || document.activeElement?.tagName);
  await page.keyboard.press("Tab");
  const first = await focused();
  await page.keyboard.press("Enter");
  const afterSkip = await page.evaluate(() => location.hash);
  // From the main content: the state menu, the age, the gender radios, Next.
  const stops = [];
  for (let i = 0; i < 12 && (await focused()) !== "demographics-state"; i++) {
    await page.keyboard.press("Tab");
    stops.push(await focused());
  }
  await page.keyboard.type("Bihar");
  await page.keyboard.press("Tab");
  await page.keyboard.type("67");
  await page.keyboard.press("Tab");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowUp");
  const gender = await page.evaluate(() => document.activeElement?.value);
  await page.keyboard.press("Tab");
  const onNext = await page.evaluate(() => document.activeElement?.value);
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.keyboard.press("Enter")]);
  const next = await page.evaluate(() => ({
    asked: document.querySelector('input[name="asked"]')?.value ?? null,
    state: document.querySelector('input[name="a.demographics.state"]')?.value ?? null,
    age: document.querySelector('input[name="a.identity.age"]')?.value ?? null,
  }));
  report.keyboard = { first, afterSkip, stops, gender, onNext, next };
  await page.close();
}

// Script off: the screener's core flow still works (first page, a question skipped, the results).
{
  const page = await newPage();
  await page.setJavaScriptEnabled(false);
  await page.goto(`${base}/check?lang=en`, { waitUntil: "load" });
  await page.select("#demographics-state", "karnataka");
  await page.type("#identity-age", "62");
  await page.click('input[name="a.identity.gender"][value="male"]');
  await submit(page, 'button[value="next"]');
  const asked = await page.$eval('input[name="asked"]', (e) => e.value);
  await submit(page, 'button[value="skip"]');
  const next = await page.$eval('input[name="asked"]', (e) => e.value).catch(() => null);
  await submit(page, 'button[value="results"]');
  report.noScript = {
    asked,
    next,
    groups: await page.$$eval("section.group", (s) => s.map((x) => x.className.replace("group ", ""))),
    printHidden: await page.$eval("[data-print]", (b) => b.hidden),
  };
  await page.close();
}

// The caseworker desk's development sign-in (this server checks tokens with the development
// secret): the form, signed in, a lookup that finds no one.
{
  const page = await newPage({ phone: false });
  await page.goto(`${base}/desk?lang=en`, { waitUntil: "load" });
  const at = new URL(page.url()).pathname;
  await audit(page, "desk-sign-in");
  await page.type("#subject", "desk-dev");
  await page.type("#states", "karnataka, tamil_nadu");
  await submit(page, 'form[action="/desk/sign-in"] button');
  const signedInAs = await page.$eval("main .meta", (e) => e.textContent.trim());
  const nobody = await page.goto(`${base}/desk/citizen?user_id=nobody&lang=en`, { waitUntil: "load" });
  report.devDesk = {
    at,
    signedInAs,
    nobody: { status: nobody.status(), alert: await page.$eval('p[role="alert"]', (e) => e.textContent) },
  };
  await page.close();
}

// The pages' own policy: loaded without bypassing it, no violation, the styles applied.
{
  const page = await newPage({ bypassCsp: false });
  const violations = [];
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  for (const path of ["/?lang=en", "/schemes?lang=hi", "/check?lang=ur", "/schemes/sch_ka_old_age_pension?lang=ta"]) {
    await page.goto(`${base}${path}`, { waitUntil: "load" });
  }
  const styled = await page.evaluate(() => getComputedStyle(document.querySelector("header")).display);
  report.csp = { violations, headerDisplay: styled };
  await page.close();
}

// Budgets: a screener page's bytes on the wire and its first paint, on a throttled network.
async function budget(name, conditions) {
  const page = await newPage({ bypassCsp: false });
  const cdp = await page.createCDPSession();
  await cdp.send("Network.enable");
  await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
  await cdp.send("Network.emulateNetworkConditions", { offline: false, ...conditions });
  let bytes = 0;
  cdp.on("Network.loadingFinished", (e) => (bytes += e.encodedDataLength));
  await page.goto(`${base}/check?lang=hi`, { waitUntil: "load", timeout: 60000 });
  const firstPaint = await page.evaluate(
    () => performance.getEntriesByName("first-paint")[0]?.startTime ?? null,
  );
  report.budgets[name] = { path: "/check?lang=hi", bytes, firstPaintMs: firstPaint, conditions };
  await page.close();
}
await budget("slow3g", SLOW_3G);
await budget("devtools_slow3g", DEVTOOLS_SLOW_3G);

await browser.close();
writeFileSync(`${out}/report.json`, JSON.stringify(report, null, 2));
console.log(`report: ${out}/report.json`);
