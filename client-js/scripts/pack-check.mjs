// The npm package as a user gets it: `npm pack` in client-js/, the tarball installed into an empty
// project in a temporary directory (offline: the package has no dependencies), and imported there
// by its name. Run by scripts/test.sh after the Maven build, not by `node --test` in client-js/
// (the name matches none of its test patterns): node --test scripts/pack-check.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, existsSync, rmSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const clientDir = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(clientDir, 'package.json'), 'utf8'));
/** What a user needs, and nothing else: the module, its types, README, LICENSE, package.json. */
const EXPECTED_FILES = ['LICENSE', 'README.md', 'package.json', 'src/ringcast.d.ts', 'src/ringcast.js'];

let work;
let tarball;
let packed;

/** npm, kept off the network and off the user's cache; its output as a string. */
function npm(args, cwd) {
    return execFileSync('npm', [...args, '--cache', join(work, 'npm-cache'), '--no-audit', '--no-fund',
        '--ignore-scripts', '--loglevel=error'], { cwd, encoding: 'utf8', env: { ...process.env,
        npm_config_update_notifier: 'false' } });
}

before(() => {
    work = realpathSync(mkdtempSync(join(tmpdir(), 'ringcast-pack-')));
    [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', work], clientDir));
    tarball = join(work, packed.filename);
});

after(() => rmSync(work, { recursive: true, force: true }));

test('the version is the Maven project version', () => {
    const pom = readFileSync(join(clientDir, 'pom.xml'), 'utf8');
    const mavenVersion = /<parent>[\s\S]*?<version>([^<]+)<\/version>/.exec(pom)[1];
    assert.equal(pkg.version, mavenVersion.replace(/-SNAPSHOT$/, ''));
});

test('the tarball holds the module, its types, README and LICENSE, and nothing else', () => {
    assert.equal(packed.filename, `ringcast-client-${pkg.version}.tgz`);
    assert.ok(existsSync(tarball), tarball);
    assert.deepEqual(packed.files.map(f => f.path).sort(), EXPECTED_FILES);
    assert.equal(readFileSync(join(clientDir, 'LICENSE'), 'utf8'),
        readFileSync(join(clientDir, '..', 'LICENSE'), 'utf8'), 'client-js/LICENSE is a copy of the root LICENSE');
});

test('installed from the tarball, it imports by its name, with every export and its types', async () => {
    const app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    npm(['install', '--offline', tarball], app);
    writeFileSync(join(app, 'check.mjs'), [
        "import * as ringcast from 'ringcast-client';",
        "console.log(JSON.stringify({ exports: Object.keys(ringcast).sort(),",
        "  resolved: import.meta.resolve('ringcast-client'), connect: typeof ringcast.connect }));",
    ].join('\n'));
    const seen = JSON.parse(execFileSync(process.execPath, ['check.mjs'], { cwd: app, encoding: 'utf8' }));

    const installed = join(app, 'node_modules', 'ringcast-client');
    assert.equal(fileURLToPath(seen.resolved), join(installed, 'src', 'ringcast.js'), 'the installed copy, not the source');
    const source = await import('../src/ringcast.js');
    assert.deepEqual(seen.exports, Object.keys(source).sort());
    assert.equal(seen.connect, 'function');

    const installedPkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    const types = readFileSync(join(installed, installedPkg.exports['.'].types), 'utf8');
    const declared = [...types.matchAll(/^export declare (?:const|function|class) (\w+)/gm)].map(m => m[1]).sort();
    assert.deepEqual(declared, seen.exports, 'ringcast.d.ts declares every export of ringcast.js');
});
