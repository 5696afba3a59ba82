// What the browser runs share: Debian's Chromium (scripts/stack.sh installs it), launched
// headless, and an axe-core audit of a page.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import puppeteer from "puppeteer-core";

const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

export function launch() {
  return puppeteer.launch({
    executablePath: process.env.ELIGIBILITY_CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  });
}

// The page's axe-core violations. axe is injected as a script of the page, which the pages' own
// policy rightly forbids: an audited page is opened with `setBypassCSP(true)`.
export async function violations(page) {
  await page.addScriptTag({ content: axeSource });
  return page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length }));
  });
}
