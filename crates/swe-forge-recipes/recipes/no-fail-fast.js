// swe-forge: switch off the fail-fast of a JavaScript project's own scripts and configuration,
// so that a failing test never hides the tests after it. Run with node (10 or later) from the
// repository's root before the test command, under the strict label rule; every change is printed
// as `swe-forge: fail-fast off: ...`. Changes only files of the container's working tree.
'use strict';
var fs = require('fs');
var RUNNER = /(^|[\s/])(mocha|_mocha|jest|vitest|ava|tap)(\s|$)/;
var FLAG = /(^|\s)(--bail(=\S*)?|-b|--fail-fast|--failFast)(?=\s|$)/g;

function say(what) {
  console.log('swe-forge: fail-fast off: ' + what);
}

function stripScript(text) {
  var parts = text.split(/(\s*&&\s*|\s*\|\|\s*|\s*;\s*)/);
  var i;
  for (i = 0; i < parts.length; i += 2) {
    if (RUNNER.test(parts[i])) parts[i] = parts[i].replace(FLAG, '$1').replace(/ {2,}/g, ' ').replace(/\s+$/, '');
  }
  // grunt stops at the first task that fails or warns (a linter before the tests: "Aborted due to
  // warnings"); `--force` goes on with the tasks after it.
  for (i = 0; i < parts.length; i += 2) {
    if (/(^|[\s/])grunt(\s|$)/.test(parts[i]) && !/(^|\s)--force(\s|$)/.test(parts[i])) {
      parts[i] = parts[i].replace(/\s+$/, '') + ' --force';
    }
  }
  // `a && b` where both run tests: b must run when a fails.
  for (i = 1; i < parts.length - 1; i += 2) {
    if (/&&/.test(parts[i]) && RUNNER.test(parts[i - 1]) && RUNNER.test(parts[i + 1])) parts[i] = '; ';
  }
  return parts.join('');
}

function rewrite(file, change) {
  var before;
  try {
    before = fs.readFileSync(file, 'utf8');
  } catch (e) {
    return;
  }
  var after = change(before);
  if (after !== before) {
    fs.writeFileSync(file, after);
    say(file);
  }
}

var pkgText = fs.readFileSync('package.json', 'utf8');
var pkg;
try {
  pkg = JSON.parse(pkgText);
} catch (e) {
  pkg = null;
}
if (pkg && typeof pkg === 'object') {
  var changed = false;
  var scripts = pkg.scripts || {};
  Object.keys(scripts).forEach(function (name) {
    if (typeof scripts[name] !== 'string') return;
    var s = stripScript(scripts[name]);
    if (s !== scripts[name]) {
      say('package.json scripts.' + name + ': ' + JSON.stringify(scripts[name]) + ' -> ' + JSON.stringify(s));
      scripts[name] = s;
      changed = true;
    }
  });
  ['mocha', 'jest'].forEach(function (tool) {
    if (pkg[tool] && typeof pkg[tool] === 'object' && pkg[tool].bail) {
      say('package.json ' + tool + '.bail');
      delete pkg[tool].bail;
      changed = true;
    }
  });
  if (changed) fs.writeFileSync('package.json', JSON.stringify(pkg, null, 2) + '\n');
}

['.mocharc.yml', '.mocharc.yaml'].forEach(function (f) {
  rewrite(f, function (t) {
    return t.replace(/^([ \t]*bail[ \t]*:[ \t]*)true[ \t]*$/gm, '$1false');
  });
});
['.mocharc.json', '.mocharc.jsonc', '.mocharc.js', '.mocharc.cjs'].forEach(function (f) {
  rewrite(f, function (t) {
    return t.replace(/(["']?bail["']?\s*:\s*)true/g, '$1false');
  });
});
rewrite('test/mocha.opts', function (t) {
  return t.replace(/^[ \t]*(--bail|-b)[ \t]*$/gm, '');
});
['jest.config.js', 'jest.config.ts', 'jest.config.cjs', 'jest.config.mjs', 'jest.config.json', 'vitest.config.js',
  'vitest.config.ts', 'vitest.config.mjs', 'vite.config.js', 'vite.config.ts'].forEach(function (f) {
  rewrite(f, function (t) {
    return t.replace(/(["']?bail["']?\s*:\s*)(true|[1-9][0-9]*)/g, function (m, key) {
      return key + '0';
    });
  });
});
