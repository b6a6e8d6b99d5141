'use strict';
// Where this machine's native `anvil` and `anvil-hook` are, and how they are put in bin/.
//
// The binaries come in one package per platform (anvil-debate-linux-x64, …), an optional
// dependency of this one: npm installs only the one whose `os` and `cpu` match. `install.js`
// (the postinstall) links them over the launchers in bin/, so that `anvil` and `anvil-hook` on
// PATH, and the plugin's hooks, are the native programs themselves. When install scripts are
// blocked, bin/ keeps the launchers (launch.js), which find the binary here and run it.

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

// { "linux-x64": "anvil-debate-linux-x64", … }: written by `cargo xtask dist` from its table.
const PLATFORMS = require('./platforms.json');
const PROGRAMS = ['anvil', 'anvil-hook'];
const EXE = process.platform === 'win32' ? '.exe' : '';

function platformPackage() {
  const key = `${process.platform}-${process.arch}`;
  const name = PLATFORMS[key];
  if (!name) {
    throw new Error(
      `there is no prebuilt anvil for ${key} (there is for ${Object.keys(PLATFORMS).join(', ')}); ` +
        'with Rust installed, `cargo install anvil-debate` builds it'
    );
  }
  return name;
}

// The places to look for the platform package from `root` (this package): Node's own
// resolution (beside it in a global or local node_modules, or inside it), then the npm cache
// of a Claude Code plugin install, which keeps the dependencies beside a copy of the package
// (`…/plugins/npm-cache/node_modules`, an ancestor's `npm-cache`).
function searchPaths(root) {
  const out = [root];
  for (let dir = path.dirname(root); ; dir = path.dirname(dir)) {
    out.push(path.join(dir, 'npm-cache'));
    if (path.dirname(dir) === dir) break;
  }
  return out;
}

// The folder of this platform's package, or an error that says what to do.
function platformDir(root) {
  const name = platformPackage();
  try {
    return path.dirname(require.resolve(`${name}/package.json`, { paths: searchPaths(root) }));
  } catch {
    throw new Error(
      `the package ${name}, which holds anvil's binaries for this machine, is not installed ` +
        '(npm leaves optional dependencies out with --omit=optional or --no-optional); ' +
        'install anvil-debate again without that option'
    );
  }
}

// The native program `name` (anvil or anvil-hook) for this machine.
function nativeBinary(root, name) {
  return path.join(platformDir(root), 'bin', name + EXE);
}

// Links (or copies) the native programs over the launchers in `root`/bin, each checked to run
// before it replaces anything. On Windows nothing is replaced: npm's command shims there start
// the launcher with node, and would fail on a native program in its place.
function place(root) {
  if (process.platform === 'win32') return [];
  const placed = [];
  for (const name of PROGRAMS) {
    const source = nativeBinary(root, name);
    const dest = path.join(root, 'bin', name);
    const temporary = `${dest}.${process.pid}.tmp`;
    try {
      try {
        fs.linkSync(source, temporary);
      } catch {
        fs.copyFileSync(source, temporary);
      }
      fs.chmodSync(temporary, 0o755);
      const check = spawnSync(temporary, ['--version'], { stdio: 'ignore', timeout: 30000 });
      if (check.status !== 0) {
        throw new Error(`${source} does not run on this machine`);
      }
      fs.renameSync(temporary, dest);
      placed.push(dest);
    } finally {
      fs.rmSync(temporary, { force: true });
    }
  }
  return placed;
}

// Is `file` one of the node launchers (not yet replaced by the native program)?
function isLauncher(file) {
  try {
    const head = Buffer.alloc(2);
    const fd = fs.openSync(file, 'r');
    try {
      fs.readSync(fd, head, 0, 2, 0);
    } finally {
      fs.closeSync(fd);
    }
    return head.toString() === '#!';
  } catch {
    return false;
  }
}

module.exports = { PROGRAMS, nativeBinary, place, isLauncher };
