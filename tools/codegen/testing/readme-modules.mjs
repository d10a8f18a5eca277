// The modules that describeReadmeExamples type-checks, made from a README's ts blocks.
import ts from 'typescript';

/**
 * The text of the modules the blocks make: the first holds every block it can, each further
 * one a block whose bindings clash with the first's, or a block that exports (a Next.js route,
 * a Worker), checked as the module it is: its code at the top level, not in a function.
 *
 * @param {string[]} blocks
 * @param {string} prelude
 * @returns {string[]}
 * @example
 * readmeModules(["import { a } from 'm';\na();\n"], 'declare const x: number;\n');
 */
export function readmeModules(blocks, prelude) {
  /** @typedef {{ bindings: Map<string, string>, lines: string[], bodies: string[] }} Module */
  /** @returns {Module} */
  const newModule = () => ({ bindings: new Map(), lines: [], bodies: [] });
  const shared = newModule();
  const modules = [shared];
  blocks.forEach((block, index) => {
    const { bindings, lines, body, exports } = splitBlock(block);
    if (exports) {
      modules.push({ bindings, lines, bodies: [body] });
      return;
    }
    const clashes = [...bindings].some(([name, text]) => shared.bindings.has(name) && shared.bindings.get(name) !== text);
    const target = clashes ? newModule() : shared;
    if (clashes) modules.push(target);
    bindings.forEach((text, name) => target.bindings.set(name, text));
    for (const line of lines) if (!target.lines.includes(line)) target.lines.push(line);
    target.bodies.push(`export async function example${index}() {\n${body}\n}`);
  });
  // A module of its own may bind a name the prelude stands for (a Worker's own `receiver`, its
  // own import of a type): there, the block's binding replaces the prelude's.
  const preludeParts = splitBlock(prelude);
  const preludeWithout = (/** @type {Set<string>} */ names) => {
    const dropped = new Set([...preludeParts.bindings].filter(([name]) => names.has(name)).map(([, text]) => text));
    return dropped.size === 0 ? prelude : `${preludeParts.lines.filter((line) => !dropped.has(line)).join('\n')}\n${preludeParts.body}`;
  };
  return modules.map(({ bindings, lines, bodies }, index) => {
    const own = index === 0 ? prelude : preludeWithout(new Set([...bindings.keys(), ...bodies.flatMap(topLevelNames)]));
    return `${lines.join('\n')}\n${own}${bodies.join('\n')}\n`;
  });
}

/**
 * The names a module body declares at its top level (variables, functions, classes...).
 * @param {string} body
 * @returns {string[]}
 */
function topLevelNames(body) {
  const source = ts.createSourceFile('body.ts', body, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  return source.statements.flatMap(declaredNames);
}

/**
 * One block's module-level lines (each import binding as an import of its own, each `declare`
 * statement), the names they bind, the rest of the block, and whether it exports anything.
 *
 * @param {string} block
 * @returns {{ bindings: Map<string, string>, lines: string[], body: string, exports: boolean }}
 */
function splitBlock(block) {
  const source = ts.createSourceFile('block.ts', block, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  /** @type {Map<string, string>} */
  const bindings = new Map();
  /** @type {string[]} */
  const lines = [];
  /** @type {[number, number][]} */
  const hoisted = [];
  const exports = source.statements.some((statement) => ts.isExportDeclaration(statement) || ts.isExportAssignment(statement)
    || (ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)));
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      hoisted.push([statement.getStart(source), statement.end]);
      const from = statement.moduleSpecifier.getText(source);
      const clause = statement.importClause;
      if (clause === undefined) lines.push(`import ${from};`);
      const typeOnly = clause?.isTypeOnly ? 'type ' : '';
      /** @param {string} name @param {string} text */
      const bind = (name, text) => {
        bindings.set(name, text);
        lines.push(text);
      };
      if (clause?.name) bind(clause.name.text, `import ${typeOnly}${clause.name.text} from ${from};`);
      const named = clause?.namedBindings;
      if (named && ts.isNamespaceImport(named)) bind(named.name.text, `import ${typeOnly}* as ${named.name.text} from ${from};`);
      if (named && ts.isNamedImports(named)) {
        for (const element of named.elements) {
          const imported = (element.propertyName ?? element.name).getText(source);
          const type = typeOnly || (element.isTypeOnly ? 'type ' : '');
          bind(element.name.text, `import { ${type}${imported} as ${element.name.text} } from ${from};`);
        }
      }
    } else if (ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((modifier) => modifier.kind === ts.SyntaxKind.DeclareKeyword)) {
      hoisted.push([statement.getStart(source), statement.end]);
      const text = statement.getText(source);
      lines.push(text);
      for (const name of declaredNames(statement)) bindings.set(name, text);
    }
  }
  let body = block;
  for (const [start, end] of hoisted.reverse()) body = body.slice(0, start) + body.slice(end);
  return { bindings, lines, body, exports };
}

/**
 * @param {import('typescript').Statement} statement
 * @returns {string[]}
 */
function declaredNames(statement) {
  if (ts.isVariableStatement(statement)) {
    return statement.declarationList.declarations.flatMap((declaration) => (ts.isIdentifier(declaration.name) ? [declaration.name.text] : []));
  }
  const name = /** @type {{ name?: import('typescript').Node }} */ (statement).name;
  return name && ts.isIdentifier(name) ? [name.text] : [];
}
