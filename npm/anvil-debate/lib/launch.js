'use strict';
// The launcher that bin/anvil and bin/anvil-hook are until the native programs replace them
// (install.js, when npm runs install scripts). It runs the native program for this machine
// with the same arguments, standard streams and exit status: correct, but it pays node's start
// on every call, which the Stop hook pays on every turn. `anvil doctor` says how to get the
// native programs in place (it sees ANVIL_NPM_LAUNCHER).
//
// Inside a Claude Code plugin that was installed without install scripts (Claude Code unpacks
// a plugin's npm package with scripts off), the first hook does what the postinstall would
// have done: it puts the native programs in the plugin's bin/, so that every later hook and
// command runs them directly.

const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');
const native = require('./native.js');

function samePath(a, b) {
  try {
    return fs.realpathSync(a) === fs.realpathSync(b);
  } catch {
    return false;
  }
}

module.exports = function launch(name) {
  const root = path.join(__dirname, '..');
  let binary;
  try {
    binary = native.nativeBinary(root, name);
  } catch (e) {
    process.stderr.write(`anvil: ${e.message}\n`);
    process.exit(1);
  }
  const plugin = process.env.CLAUDE_PLUGIN_ROOT;
  if (plugin && samePath(plugin, root)) {
    try {
      native.place(root);
    } catch {
      // A read-only plugin folder: keep launching; `anvil doctor` says so.
    }
  }
  const child = spawn(binary, process.argv.slice(2), {
    stdio: 'inherit',
    env: {
      ...process.env,
      ANVIL_NPM_LAUNCHER: path.join(root, 'bin', name),
      // On Linux the program asks to end when this process ends, even by a signal nobody can
      // catch or pass on (SIGKILL): see anvil_core::launcher.
      ANVIL_NPM_LAUNCHER_PID: String(process.pid),
    },
  });
  // A terminal's Ctrl+C reaches the whole process group, the program included; every other
  // signal node lets a script catch, sent to this process alone, is passed on. (SIGUSR1 is
  // node's own; SIGKILL and SIGSTOP cannot be caught: the program ends with this process by
  // itself, above.)
  process.on('SIGINT', () => {});
  for (const signal of ['SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2', 'SIGALRM', 'SIGWINCH']) {
    process.on(signal, () => child.kill(signal));
  }
  child.on('error', (e) => {
    process.stderr.write(`anvil: cannot run ${binary}: ${e.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code === null ? 1 : code);
  });
};
