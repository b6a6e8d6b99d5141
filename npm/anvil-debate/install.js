'use strict';
// npm's postinstall: puts this machine's native `anvil` and `anvil-hook` in bin/, over the
// node launchers, so that what npm linked onto PATH (and what the plugin's hooks call) is the
// native program. It never fails the install: without it the launchers still work.

const native = require('./lib/native.js');

try {
  native.place(__dirname);
} catch (e) {
  // The launchers work only where the native programs are there to launch: say which case
  // this is, not that all is well.
  let launchable = true;
  try {
    native.nativeBinary(__dirname, 'anvil');
  } catch {
    launchable = false;
  }
  process.stderr.write(
    `anvil: ${e.message}\n` +
      (launchable
        ? 'anvil: `anvil` and `anvil-hook` still work through their node launcher, more ' +
          'slowly; `anvil doctor` says more\n'
        : 'anvil: `anvil` and `anvil-hook` cannot run on this machine until that is fixed\n')
  );
}
