// The room on a phone and on a desk: "New debate" starts a headless run that the page then
// follows live, and the pages people read most (the form, the debate, the compare page) fit a
// 390-pixel screen, the positions chart's words included. Debian's chromium, headless, driven
// by playwright-core; run by tests/it/serve_browser.rs, which starts `anvil serve` in an empty
// project with every agent ready (the real CLIs against a scripted model) and checks the record
// afterwards. Exits non-zero on the first failed check.
//
// Screenshots, at 390 and 1280 pixels wide, in SCREENSHOTS: new-W.png (the form),
// started-W.png (the debate it started, finished), compare-W.png (two of its rounds).
//
// Environment: SERVE_URL (the URL anvil serve printed), CHROMIUM, SCREENSHOTS (a directory).

import path from "node:path";

import { check, env, run } from "./common.mjs";

const URL_WITH_TOKEN = env("SERVE_URL");
const SHOTS = env("SCREENSHOTS");
const BASE = URL_WITH_TOKEN.split("/?")[0];
const QUESTION = "Should we move billing to Rust?";
const PHONE = 390;
const DESK = 1280;
// The smallest text, in CSS pixels, that the chart may show on a phone.
const SMALLEST = 11;

const shot = (page, name) => page.screenshot({ path: path.join(SHOTS, name + ".png"), fullPage: true });

// Every chart on the page, measured as drawn: the size of each word in pixels, each word's box,
// and the chart's own box.
function charts(page) {
  return page.evaluate(() =>
    [...document.querySelectorAll("svg.anvil-chart")].map((svg) => {
      const box = svg.getBoundingClientRect();
      const scale = svg.getScreenCTM().a;
      const words = [...svg.querySelectorAll("text")].map((t) => {
        const b = t.getBoundingClientRect();
        return {
          text: t.textContent,
          px: parseFloat(getComputedStyle(t).fontSize) * scale,
          left: b.left, right: b.right, top: b.top, bottom: b.bottom,
        };
      });
      return { left: box.left, right: box.right, top: box.top, bottom: box.bottom, width: box.width, words };
    }),
  );
}

// The page fits the window, and each chart on it can be read: no word under SMALLEST pixels
// (at a phone's width), none cut by the chart's edge, none drawn over another.
async function legible(page, width, where) {
  const wide = await page.evaluate(() => document.scrollingElement.scrollWidth);
  check(wide <= width, `${where} at ${width} px: nothing wider than the window (${wide} px)`);
  const found = await charts(page);
  check(found.length > 0, `${where} at ${width} px: a positions chart`);
  for (const [i, c] of found.entries()) {
    const smallest = Math.min(...c.words.map((w) => w.px));
    check(smallest >= (width === PHONE ? SMALLEST : 13),
      `${where} at ${width} px, chart ${i + 1} (${Math.round(c.width)} px wide): its words are ${smallest.toFixed(1)} px high or more`);
    const slack = 0.5;
    const cut = c.words.filter((w) => w.left < c.left - slack || w.right > c.right + slack || w.top < c.top - slack || w.bottom > c.bottom + slack);
    check(cut.length === 0, `${where} at ${width} px, chart ${i + 1}: no word cut by its edge ${JSON.stringify(cut.map((w) => w.text))}`);
    const over = [];
    c.words.forEach((a, j) => c.words.slice(j + 1).forEach((b) => {
      const apart = a.right <= b.left + slack || b.right <= a.left + slack || a.bottom <= b.top + slack || b.bottom <= a.top + slack;
      if (!apart) over.push(`${a.text} / ${b.text}`);
    }));
    check(over.length === 0, `${where} at ${width} px, chart ${i + 1}: no word over another ${JSON.stringify(over)}`);
  }
}

await run({ width: DESK, height: 900 }, path.join(SHOTS, "room-failure.png"), async (page) => {
  page.setDefaultTimeout(15000);

  // ---- an empty room offers to start a debate ----
  await page.goto(URL_WITH_TOKEN);
  await page.getByRole("link", { name: "New debate" }).click();
  await page.waitForURL(/\/new$/);
  await page.locator('body[data-live="connected"]').waitFor();

  // The seats offer the host and each agent ready here.
  const critic = page.getByLabel("Critic", { exact: true });
  const offered = await critic.locator("option").evaluateAll((os) => os.map((o) => o.value));
  check(["", "claude", "codex", "copilot", "qwen"].every((v) => offered.includes(v)),
    "the critic's seat offers Claude Code and every agent ready here: " + JSON.stringify(offered));

  // Each mode shows what it uses, and only that is sent.
  const mode = page.getByLabel("Mode", { exact: true });
  await mode.selectOption("stakeholders");
  check(await page.getByLabel("Rounds").isHidden() && await page.getByLabel("Advocate").isHidden() &&
    await page.getByLabel("Stakeholders").isVisible(), "stakeholders: one seat for the voices, no rounds to set");
  await mode.selectOption("devils-advocate");
  check(await page.getByLabel("Your position").isVisible(), "devil's advocate asks for the person's position");
  await mode.selectOption("analyst");
  check(await page.getByLabel("Your position").isHidden() && await page.getByLabel("Rounds").isVisible(),
    "analyst: rounds, no position");

  for (const width of [DESK, PHONE]) {
    await page.setViewportSize({ width, height: 900 });
    const wide = await page.evaluate(() => document.scrollingElement.scrollWidth);
    check(wide <= width, `the form at ${width} px: nothing wider than the window (${wide} px)`);
    await shot(page, `new-${width}`);
  }

  // ---- started from a phone, with Codex in the critic's seat ----
  await page.getByLabel("Question").fill(QUESTION);
  await page.getByLabel("Rounds").fill("3");
  await critic.selectOption("codex");
  await page.getByRole("button", { name: "Start the debate" }).click();
  await page.waitForURL(/\/debates\/[^/?]+$/);
  const debate = decodeURIComponent(new URL(page.url()).pathname.split("/").pop());
  await page.locator('body[data-live="connected"]').waitFor();
  await page.evaluate(() => { window.__samePage = true; });
  check((await page.locator("h1").innerText()) === QUESTION, "the page of the new debate opens");
  check((await page.locator("#headless-status").innerText()).includes("Running headless"),
    "it says the debate runs headless");

  // Its phases come in as they are recorded, to the synthesis and the run's end.
  await page.locator("#phases article.phase.critic").first().waitFor({ timeout: 120000 });
  await page.locator("#headless-status.done").waitFor({ timeout: 240000 });
  await page.locator("#synthesis").getByText(`SYNTHESIS of ${debate}@main`).waitFor();
  check(await page.evaluate(() => window.__samePage === true), "every phase and the end came without a reload");
  const seats = await page.locator("article.phase.critic .seat").allInnerTexts();
  check(seats.length === 3 && seats.every((s) => s.startsWith("codex")), "Codex played the critic: " + JSON.stringify(seats));
  check(await page.locator("article.phase.advocate .seat").count() === 0, "the host played the advocate");

  // The state is said once, in its badge.
  const tree = (await page.locator("#tree li").first().innerText()).replace(/\s+/g, " ").trim();
  check(tree === "main done", "the line's entry says its state once: " + JSON.stringify(tree));
  const status = (await page.locator("#line-status p.meta").first().innerText()).replace(/\s+/g, " ");
  check(!/done done/.test(status), "the line's status says its state once: " + JSON.stringify(status));
  const now = await page.locator("#positions p.meta").innerText();
  check(now.includes("positions steady: would have stopped after round 2"),
    "positions held after round 2 of 3, and the page says so: " + JSON.stringify(now));

  for (const width of [PHONE, DESK]) {
    await page.setViewportSize({ width, height: 900 });
    await legible(page, width, "the debate");
    await shot(page, `started-${width}`);
  }

  // ---- two of its rounds side by side, named as the address names them ----
  await page.goto(`${BASE}/debates/${debate}/compare?a=round-1&b=round-2`);
  await page.locator(".pair").first().waitFor();
  const picked = async (label) => page.getByLabel(label).evaluate((s) => s.selectedOptions[0].textContent);
  check(await picked("Older side") === "main:round-1" && await picked("Newer side") === "main:round-2",
    "the pickers show the rounds the address names");
  const sides = await page.locator(".pair .side .text").allInnerTexts();
  check(sides.some((t) => t.includes("Position: against 0.7")) && sides.every((t) => !t.includes("<anvil-") && !t.includes("**")),
    "positions are words on both sides, neither tags nor markdown");
  for (const width of [PHONE, DESK]) {
    await page.setViewportSize({ width, height: 900 });
    await legible(page, width, "compare");
    await shot(page, `compare-${width}`);
  }
});
