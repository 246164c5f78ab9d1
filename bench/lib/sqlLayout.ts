// Reads the select list of a statement PostGraphile generated: which column
// (by position) holds which table's column, including the nested
// `array(select array[...]::text[] ...)` lists it uses for one-to-many
// selections. The S2 floor builds its JSON from this, so it keeps working
// when the service's SQL changes shape (a relation instead of a function, a
// join instead of a second statement, columns in another order).

export interface ColumnRef {
  /** Table alias without the underscores, e.g. "orders", "order_items", "coffee_by_id". */
  alias: string;
  column: string;
}

export interface SelectColumn {
  position: number;
  ref: ColumnRef | null;
  /** For array(select array[...]) columns: the element layout. */
  elements?: Array<ColumnRef | null>;
}

function splitTopLevel(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (quote) {
      if (ch === quote) {
        if (s[i + 1] === quote) i++;
        else quote = null;
      }
      continue;
    }
    if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "(" || ch === "[") depth++;
    else if (ch === ")" || ch === "]") depth--;
    else if (ch === "," && depth === 0) {
      parts.push(s.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(s.slice(start));
  return parts.map((p) => p.trim()).filter(Boolean);
}

/** The index of the keyword `word` at nesting depth 0, outside quotes, from `from`. */
function topLevelIndex(s: string, word: RegExp, from = 0): number {
  let depth = 0;
  let quote: string | null = null;
  for (let i = from; i < s.length; i++) {
    const ch = s[i]!;
    if (quote) {
      if (ch === quote) quote = null;
      continue;
    }
    if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "(" || ch === "[") depth++;
    else if (ch === ")" || ch === "]") depth--;
    else if (depth === 0 && word.test(s.slice(i, i + 8)) && /\s/.test(s[i - 1] ?? " ")) return i;
  }
  return -1;
}

const refOf = (expr: string): ColumnRef | null => {
  const m = /__([a-z0-9_]+?)__\."([a-z0-9_]+)"/i.exec(expr);
  return m ? { alias: m[1]!, column: m[2]! } : null;
};

/** The select list of the outermost SELECT of `sql`. */
export function selectLayout(sql: string): SelectColumn[] {
  const text = sql.trim();
  const begin = /^select\s/i.exec(text) ? 6 : -1;
  if (begin < 0) return [];
  const end = topLevelIndex(text, /^from\s/i, begin);
  const list = text.slice(begin, end < 0 ? undefined : end);
  return splitTopLevel(list).map((item, position) => {
    const asMatch = /\sas\s+"(\d+)"\s*$/i.exec(item);
    const expr = asMatch ? item.slice(0, asMatch.index) : item;
    const arr = /^array\s*\(\s*select\s+array\s*\[/i.exec(expr);
    if (arr) {
      let depth = 1;
      let i = arr[0].length;
      for (; i < expr.length && depth > 0; i++) {
        if (expr[i] === "[") depth++;
        else if (expr[i] === "]") depth--;
      }
      const inner = expr.slice(arr[0].length, i - 1);
      return { position: asMatch ? Number(asMatch[1]) : position, ref: null, elements: splitTopLevel(inner).map(refOf) };
    }
    return { position: asMatch ? Number(asMatch[1]) : position, ref: refOf(expr) };
  });
}

export type Convert = "text" | "int" | "float" | "bool" | "array";

/** Where a field comes from: a column of a table (any of `aliases`), converted. */
export interface FieldSource {
  aliases: string[];
  column: string;
  convert?: Convert;
}

export function findColumn(layout: SelectColumn[], src: FieldSource): number {
  return layout.findIndex((c) => c.ref && src.aliases.includes(c.ref.alias) && c.ref.column === src.column);
}

export function findArray(layout: SelectColumn[], aliasTest: (alias: string) => boolean): number {
  return layout.findIndex((c) => c.elements?.some((e) => e && aliasTest(e.alias)));
}

export function findElement(elements: Array<ColumnRef | null>, src: FieldSource): number {
  return elements.findIndex((e) => e && src.aliases.includes(e.alias) && e.column === src.column);
}
