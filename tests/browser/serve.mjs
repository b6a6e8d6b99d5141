// The web room in a real browser: Debian's chromium, headless, driven by playwright-core.
// Run by tests/it/serve_browser.rs (`cargo test`), which prepares a project with a debate and
// starts `anvil serve`; this script plays the person at the page and the Claude session at the
// hook, and exits non-zero on the first failed check.
//
// Environment: SERVE_URL (the URL anvil serve printed), ANVIL_BIN, PROJECT, DEBATE, SESSION
// (the session the debate is bound to), FEEDBACK_SESSION (a registered session without a
// debate), CHROMIUM, SCREENSHOTS (a directory). The server was started with a Claude Code CLI
// and a scripted model in its environment, for the headless run it starts.

import { execFileSync, spawn } from "node:child_process";
import path from "node:path";

import { check, env, run } from "./common.mjs";

const URL_WITH_TOKEN = env("SERVE_URL");
const ANVIL = env("ANVIL_BIN");
const PROJECT = env("PROJECT");
const DEBATE = env("DEBATE");
const SESSION = env("SESSION");
const FEEDBACK_SESSION = env("FEEDBACK_SESSION");
const SHOTS = env("SCREENSHOTS");
const BASE = URL_WITH_TOKEN.split("/?")[0];

const childEnv = { ...process.env };
for (const k of ["CLAUDE_CODE_SESSION_ID", "ANVIL_NOW", "CLAUDE_PROJECT_DIR"]) delete childEnv[k];

function anvil(args, input) {
  return execFileSync(ANVIL, args, { cwd: PROJECT, env: childEnv, input: input ?? "", encoding: "utf8" });
}

// What Claude Code's Stop hook call would do at the end of a turn that wrote `text`.
function hookStop(session, text) {
  const out = anvil(
    ["hook", "stop"],
    JSON.stringify({ session_id: session, cwd: PROJECT, hook_event_name: "Stop", stop_hook_active: true, last_assistant_message: text }),
  );
  return out.trim() ? JSON.parse(out) : null;
}

await run({ width: 1200, height: 900 }, path.join(SHOTS, "failure.png"), async (page) => {
  page.setDefaultTimeout(10000);

  // ---- the list, opened with the token ----
  await page.goto(URL_WITH_TOKEN);
  check(new URL(page.url()).search === "", "the token left the address bar for a cookie");
  const row = page.getByRole("link", { name: /Should we rewrite billing in Rust\?/ });
  await row.waitFor();
  check(await page.locator("table.debates tbody tr").count() === 1, "the list shows the debate");
  await page.getByLabel("Search debates").fill("billing");
  await page.getByLabel("Search debates").press("Enter");
  await row.waitFor();
  await page.screenshot({ path: path.join(SHOTS, "list.png"), fullPage: true });

  // ---- the debate, live ----
  await row.click();
  await page.waitForURL(/\/debates\//);
  await page.locator('body[data-live="connected"]').waitFor();
  await page.evaluate(() => { window.__sameDocument = true; });

  // Hostile model text is shown as text and runs nothing.
  const advocate = page.locator("#step-1 .body");
  const shown = await advocate.innerText();
  check(shown.includes("<script>window.__pwned=1</script>"), "a <script> payload is shown as text");
  check(shown.includes("onerror="), "an onerror= payload is shown as text");
  check(await page.locator(".phase .body script, .phase .body img, .phase .body [onerror]").count() === 0,
    "no script, image or handler element comes from model text");
  const hrefs = await page.locator(".phase .body a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
  check(hrefs.every((h) => h === null || !/^\s*javascript:/i.test(h)), "no javascript: link comes from model text");
  await page.locator(".phase .body a", { hasText: "click me" }).click();
  check(await page.evaluate(() => window.__pwned === undefined), "nothing from model text ran");

  // A phase recorded by the hook appears without a reload.
  const critic = hookStop(SESSION, "CRITIC r1: the **migration risk** is too high.");
  check(critic?.decision === "block", "the hook recorded the critic and asked for round 2");
  await page.locator("#phases").getByText("migration risk").waitFor();
  check(await page.evaluate(() => window.__sameDocument === true), "the new phase came without a reload");

  // Steering typed in the page (keyboard only) reaches the next prompt, then shows delivered.
  const steer = page.getByLabel("Steer", { exact: true });
  await steer.focus();
  await page.keyboard.type("Weigh the hiring cost of Rust developers");
  await page.keyboard.press("Tab");
  check(await page.evaluate(() => document.activeElement?.textContent === "Queue steering"),
    "Tab moves from the steer box to its button");
  await page.keyboard.press("Enter");
  await page.locator("#line-status li.queued", { hasText: "Weigh the hiring cost" }).waitFor();
  check((await page.locator("#line-status li.queued").innerText()).includes("queued — delivered when Claude next stops"),
    "the steering shows as queued until Claude stops");
  await page.screenshot({ path: path.join(SHOTS, "debate.png"), fullPage: true });
  const round2 = hookStop(SESSION, "ADVOCATE r2: yes, with a smaller first step.");
  check(round2?.reason?.includes("Weigh the hiring cost of Rust developers"), "the next prompt carries the steering");
  await page.locator("#line-status li.delivered", { hasText: "Weigh the hiring cost" }).waitFor();
  check((await page.locator("#line-status li.delivered").innerText()).includes("delivered in round 2"),
    "the steering shows as delivered in round 2");

  // A debater's question, answered in the page, returns to the waiting `anvil ask`.
  const asker = spawn(ANVIL, ["ask", "--line", DEBATE, "--wait", "60", "What is the team's Rust experience?"],
    { cwd: PROJECT, env: childEnv });
  let askOut = "";
  asker.stdout.on("data", (d) => { askOut += d; });
  const asked = new Promise((resolve) => asker.on("exit", resolve));
  const question = page.getByRole("region", { name: "Question from a debater" });
  await question.getByText("What is the team's Rust experience?").waitFor();
  await page.screenshot({ path: path.join(SHOTS, "question.png"), fullPage: false });
  await question.getByLabel("Answer", { exact: true }).fill("Two engineers shipped Rust services before");
  await question.getByRole("button", { name: "Send answer" }).click();
  const askCode = await asked;
  check(askCode === 0 && askOut === "The human answered: Two engineers shipped Rust services before\n",
    "the waiting anvil ask returned the answer typed in the page");

  // The page has taken the answer in (its live refresh replaced the regions it changed)
  // before the person turns to the next thing: what they see, not a timer.
  await question.waitFor({ state: "detached" });
  await page.locator("#phases p.event", { hasText: "The human answered" }).waitFor();

  // A branch made in the page appears in `anvil log`, and the page says how to continue it.
  const branchPoint = page.locator("#step-2");
  await branchPoint.getByText("Branch from here").click();
  await branchPoint.getByLabel("Branch steering").waitFor({ state: "visible" });
  await branchPoint.getByLabel("Branch steering").fill("Assume we keep the Go service");
  await branchPoint.getByLabel("Line name").fill("keep-go");
  await branchPoint.getByRole("button", { name: "Branch" }).click();
  await branchPoint.locator("pre.command").waitFor();
  check((await branchPoint.locator("pre.command").innerText()) === `claude "$(anvil resume ${DEBATE}@keep-go)"`,
    "the page shows how to continue the branch");
  const log = anvil(["log", `${DEBATE}@keep-go`]);
  check(log.includes("Assume we keep the Go service"), "the branch is in anvil log");
  // ... and the page offers to run it headless: anvil serve starts `anvil run --line`.
  await branchPoint.getByRole("button", { name: "Run headless" }).click();
  await branchPoint.getByRole("link", { name: `follow ${DEBATE}@keep-go` }).waitFor();
  await page.locator("#tree").getByRole("link", { name: "keep-go" }).waitFor();
  await page.locator("#tree").getByRole("link", { name: "keep-go" }).click();
  await page.locator("#tree .depth-1").waitFor();
  check((await page.locator("#tree").innerText()).includes("Assume we keep the Go service"),
    "the tree shows where the branch came from and its steering");
  await page.screenshot({ path: path.join(SHOTS, "branch.png"), fullPage: true });
  // The headless run's phases come in live, to its synthesis and its end.
  const sameDocument = await page.evaluate(() => { window.__runPage = true; return true; });
  await page.locator("#headless-status.done").waitFor({ timeout: 120000 });
  check((await page.locator("#headless-status").innerText()).includes("Headless run finished"),
    "the page shows the headless run's end");
  await page.locator("#synthesis").getByText(`SYNTHESIS of ${DEBATE}@keep-go`).waitFor();
  check(sameDocument && await page.evaluate(() => window.__runPage === true),
    "the run's phases and its end came without a reload");
  check(await page.getByRole("button", { name: "Run headless" }).count() === 0,
    "a finished line offers no run");
  await page.screenshot({ path: path.join(SHOTS, "headless.png"), fullPage: true });

  // Compare: two rounds side by side, word by word.
  await page.goto(`${BASE}/debates/${DEBATE}/compare?a=${DEBATE}@main:round-1&b=${DEBATE}@main:round-2`);
  await page.locator(".pair").first().waitFor();
  check(await page.locator(".side.new ins").count() > 0 && await page.locator(".side.old del").count() > 0,
    "compare marks removed and added words");
  await page.screenshot({ path: path.join(SHOTS, "compare.png"), fullPage: true });

  // Feedback to a session without a debate: queued, then delivered at its next stop.
  await page.goto(`${BASE}/sessions`);
  await page.locator('body[data-live="connected"]').waitFor();
  const card = page.locator(`#session-${FEEDBACK_SESSION}`);
  await card.getByLabel("Feedback").fill("Please also update the changelog");
  await card.getByRole("button", { name: "Send feedback" }).click();
  await card.locator("li.queued").waitFor();
  const fed = hookStop(FEEDBACK_SESSION, "Done with the parser.");
  check(fed?.decision === "block" && fed.reason.includes("Please also update the changelog"),
    "the session's next stop gets the feedback");
  await page.locator(`#session-${FEEDBACK_SESSION} li.delivered`).waitFor();
  await page.screenshot({ path: path.join(SHOTS, "sessions.png"), fullPage: true });
});
