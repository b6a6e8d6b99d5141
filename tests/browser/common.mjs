// What the browser tests share: their environment, their checks, and Debian's chromium
// started headless (CHROMIUM), with every dialog, page error and console error of its page
// collected as a problem (a test ends by checking there were none).

import { chromium } from "playwright-core";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

export function check(ok, what) {
  if (!ok) throw new Error("check failed: " + what);
  console.log("ok: " + what);
}

// A fresh profile and its page, `viewport` wide; `problems` fills as the page misbehaves.
export async function open(viewport) {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "anvil-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: env("CHROMIUM"),
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport,
  });
  const problems = [];
  const page = context.pages()[0] ?? (await context.newPage());
  // Any dialog (an alert from a payload) or uncaught page error is a failure.
  page.on("dialog", async (d) => {
    problems.push("dialog: " + d.message());
    await d.dismiss();
  });
  page.on("pageerror", (e) => problems.push("page error: " + e.message));
  page.on("console", (m) => {
    if (m.type() === "error") problems.push("console error: " + m.text());
  });
  const close = async () => {
    await context.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  };
  return { page, problems, close };
}

// Runs `steps(page, problems)`; on a failure prints it and takes `failure` (a PNG path) of the
// page. Exits 0 only when every step passed and the page had no problem.
export async function run(viewport, failure, steps) {
  const { page, problems, close } = await open(viewport);
  let exitCode = 1;
  try {
    await steps(page, problems);
    check(problems.length === 0, "no dialog, page error or console error: " + JSON.stringify(problems));
    console.log("browser: all checks passed");
    exitCode = 0;
  } catch (e) {
    console.error(String(e?.stack || e));
    if (problems.length) console.error("problems: " + JSON.stringify(problems));
    try {
      await page.screenshot({ path: failure, fullPage: true });
    } catch (_) { /* the failure itself is what matters */ }
  } finally {
    await close();
  }
  process.exit(exitCode);
}
