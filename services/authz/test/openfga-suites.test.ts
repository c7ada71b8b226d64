/**
 * @module openfga-suites.test: OpenFGA's ABAC (conditions) and consolidated schema 1.1 conformance data
 * answered by the embedded engine as OpenFGA answers it (see openfga-suites.ts), every assertion agreeing.
 *
 * Not replayed: the ABAC tests named `inline_expression_*`. They exercise inline `$expression` conditions
 * (a CEL expression carried by the tuple itself), an OpenFGA feature that is off unless its server runs with
 * the `inline_expressions` experimental flag and that the engine does not implement; OpenFGA's own
 * runners turn that flag on for them.
 */
import { describe, expect, it } from '@jest/globals';
import { hasContextualVariant, loadFgaTests, runFgaTest } from './openfga-suites.ts';

/** OpenFGA tests of a feature behind an experimental OpenFGA flag the engine does not implement. */
const experimental = (name: string): boolean => name.startsWith('inline_expression_');

for (const file of ['abac_tests.yaml', 'consolidated_1_1_tests.yaml']) {
  describe(`OpenFGA's ${file} on the embedded engine`, () => {
    for (const t of loadFgaTests(file).filter((x) => !experimental(x.name))) {
      it(t.name, async () => expect(await runFgaTest(t, false)).toEqual([]));
      if (hasContextualVariant(t)) it(`${t.name} (tuples as contextual tuples)`, async () => expect(await runFgaTest(t, true)).toEqual([]));
    }
  });
}
