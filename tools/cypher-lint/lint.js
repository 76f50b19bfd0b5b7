#!/usr/bin/env node
// Lints Cypher statements with Neo4j's own Cypher front end
// (@neo4j-cypher/language-support: Neo4j's ANTLR parser plus its semantic analysis, the same
// code the Neo4j server runs before planning). No server is needed.
//
// Usage:  node tools/cypher-lint/lint.js < statements.json
//   stdin:  [{"name": "merge_files", "text": "UNWIND $rows AS r MERGE ..."}, ...]
//   stdout: [{"name": "merge_files",
//             "diagnostics": [{"message": ..., "severity": "error"|"warning"|...,
//                              "line": 1, "column": 1}]}, ...]
//   line and column are 1-based and relative to the statement's text.
//   Exit status: 0 when linting ran (whatever the diagnostics), 2 on bad input.
// Install: npm ci --prefix tools/cypher-lint
//
// Statements are analysed as CYPHER 5 (Neo4j 5), against the built-in function and procedure
// signatures that the package ships in testData.mockSchema, so unknown functions/procedures and
// wrong argument counts are errors. What the library reports, by its LSP severity:
//   1 = error:   syntax errors, semantic errors (undefined variables, type errors, ...),
//                unknown functions/procedures, wrong argument counts, and
//                "Parameter $x is not defined." (the linter has no parameter values).
//   2 = warning: Neo4j's own notifications (cartesian product, unbounded shortestPath,
//                deprecated syntax/functions) and, only when the schema lists labels,
//                relationship types and property keys, "Label X / Relationship type X /
//                <key> is not present in the database" (schema-based warnings).
// What this script drops, and why:
//   * "Parameter $x is not defined." -- every statement is parameterised; values come at run
//     time. Dropped with the library's own isNotParamError().
//   * Schema-based warnings (unknown label, relationship type, property key, impossible path
//     for the graph schema). They compare the statement with the labels of the *mock* schema
//     (Movie, Person, ACTED_IN, ...), which says nothing about our graph. They are avoided at
//     the source: the schema given to the linter carries only functions and procedures, and
//     the library runs those checks only when the schema has labels/types/keys/graphSchema.
//     A message filter below drops them as well, should a future version emit them anyway.
// Everything else is kept: all errors, and Neo4j's notifications (deprecations, cartesian
// products, unbounded shortest paths), which say something about the statement itself.
'use strict';

const fs = require('fs');
const path = require('path');

// Keep stdout for the JSON result only, whatever the library might log.
const realStdoutWrite = process.stdout.write.bind(process.stdout);
for (const level of ['log', 'info', 'warn', 'debug', 'trace']) {
  console[level] = (...args) => console.error(...args);
}

const PACKAGE = '@neo4j-cypher/language-support';
const {
  lintCypherQuery,
  isNotParamError,
  testData,
} = require(PACKAGE);

const CYPHER_VERSION = 'CYPHER 5';

const SCHEMA = {
  functions: testData.mockSchema.functions,
  procedures: testData.mockSchema.procedures,
  defaultLanguage: CYPHER_VERSION,
};

const SEVERITY = { 1: 'error', 2: 'warning', 3: 'information', 4: 'hint' };

// Schema-based warnings about names the mock schema does not know (see above). Function and
// procedure messages look alike ("Function f is not present in the database") but are errors
// and never match: only warnings are filtered.
const SCHEMA_NOISE = [
  /^(Label|Relationship type) .* is not present in the database\./,
  /^[^ ]+ is not present in the database\./, // property keys
];

function isSchemaNoise(diagnostic) {
  return (
    diagnostic.severity === 2 &&
    SCHEMA_NOISE.some((pattern) => pattern.test(diagnostic.message))
  );
}

function lintOne(text) {
  let raw;
  try {
    raw = lintCypherQuery(text, SCHEMA, { consoleCommandsEnabled: false }).diagnostics;
  } catch (err) {
    return [
      {
        message: `linter crashed: ${err && err.stack ? err.stack : String(err)}`,
        severity: 'error',
        line: 1,
        column: 1,
      },
    ];
  }
  return raw
    .filter((d) => isNotParamError(d) && !isSchemaNoise(d))
    .map((d) => ({
      message: d.message,
      severity: SEVERITY[d.severity] || String(d.severity),
      line: d.range.start.line + 1,
      column: d.range.start.character + 1,
    }));
}

function fail(message) {
  process.stderr.write(`lint.js: ${message}\n`);
  process.exit(2);
}

function main() {
  if (process.argv.includes('--version')) {
    const manifest = path.join(__dirname, 'node_modules', PACKAGE, 'package.json');
    const version = JSON.parse(fs.readFileSync(manifest, 'utf8')).version;
    realStdoutWrite(`${PACKAGE} ${version} (${CYPHER_VERSION})\n`);
    return;
  }
  let input;
  try {
    input = JSON.parse(fs.readFileSync(0, 'utf8'));
  } catch (err) {
    fail(`stdin is not JSON: ${err.message}`);
  }
  if (!Array.isArray(input)) fail('stdin must be a JSON array of {"name", "text"}');
  input.forEach((item, index) => {
    if (
      item === null ||
      typeof item !== 'object' ||
      typeof item.name !== 'string' ||
      typeof item.text !== 'string'
    ) {
      fail(`item ${index} is not {"name": string, "text": string}`);
    }
  });
  const result = input.map((item) => ({ name: item.name, diagnostics: lintOne(item.text) }));
  realStdoutWrite(JSON.stringify(result) + '\n');
}

main();
