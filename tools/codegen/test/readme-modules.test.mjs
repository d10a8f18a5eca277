import { describe, expect, it } from 'vitest';
import { readmeModules } from '../testing/readme-modules.mjs';

describe('the README blocks become modules that tsc can check', () => {
  it('puts every block in one module: imports on top, each body in a function of its own', () => {
    const modules = readmeModules(["import { a } from 'm';\nconst x = a();\n", 'if (x) return;\n'], 'declare const x: number;\n');
    expect(modules).toEqual([
      "import { a as a } from 'm';\ndeclare const x: number;\nexport async function example0() {\n\nconst x = a();\n\n}\nexport async function example1() {\nif (x) return;\n\n}\n",
    ]);
  });

  it('imports a name that several blocks import from the same module once', () => {
    const [module] = readmeModules(["import { a, b } from 'm';\n", "import { a, type C } from 'm';\nimport d, * as e from 'n';\n"], '');
    expect(module?.match(/^import .*$/gm)).toEqual([
      "import { a as a } from 'm';",
      "import { b as b } from 'm';",
      "import { type C as C } from 'm';",
      "import d from 'n';",
      "import * as e from 'n';",
    ]);
  });

  it('moves declare statements to the top of the module, where they are legal', () => {
    const [module] = readmeModules(["import type { P } from 'm';\ndeclare const p: P; // the provider\nuse(p);\n"], '');
    expect(module).toContain("import { type P as P } from 'm';\ndeclare const p: P;\n");
    expect(module).toContain('example0() {\n\n // the provider\nuse(p);');
  });

  it('checks a block that imports a name another block imported from elsewhere as a module of its own, with the prelude', () => {
    const modules = readmeModules(["import { a } from 'm';\na();\n", "import { a } from 'n';\na();\n", 'a();\n'], 'declare const z: 1;\n');
    expect(modules).toHaveLength(2);
    expect(modules[0]).toMatch(/^import \{ a as a \} from 'm';\ndeclare const z: 1;\n/);
    expect(modules[0]).toContain('example0');
    expect(modules[0]).toContain('example2');
    expect(modules[1]).toMatch(/^import \{ a as a \} from 'n';\ndeclare const z: 1;\nexport async function example1\(\)/);
  });

  it('checks a block that exports (a Next.js route, a Worker) as the module it is, its code at the top level', () => {
    const modules = readmeModules(['a();\n', "import { h } from 'm';\nexport const runtime = 'nodejs';\nexport default { fetch: h };\n"], 'declare const z: 1;\n');
    expect(modules).toHaveLength(2);
    expect(modules[0]).not.toContain('runtime');
    expect(modules[1]).toBe("import { h as h } from 'm';\ndeclare const z: 1;\n\nexport const runtime = 'nodejs';\nexport default { fetch: h };\n\n");
  });

  it('leaves out of a module of its own the prelude lines that bind a name the block binds itself (a Worker\'s own receiver, its own type import)', () => {
    const prelude = "import { type R, other } from 'pkg';\ndeclare const receiver: R;\ninterface Env { KEY: string }\n";
    const modules = readmeModules(['receiver.go();\n', "import { make, type R } from 'pkg';\nlet receiver: R | undefined;\nexport default { fetch: () => (receiver ??= make()) };\n"], prelude);
    expect(modules[0]).toContain('declare const receiver: R;');
    expect(modules[1]).not.toContain('declare const receiver');
    expect(modules[1]).toContain("import { other as other } from 'pkg';");
    expect(modules[1].match(/as R \}/g)).toHaveLength(1);
    expect(modules[1]).toContain('interface Env { KEY: string }');
  });
});
