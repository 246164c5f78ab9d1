// Reads the select list of a statement PostGraphile generated: which column
// (by position) holds which table's column, including the nested
// `array(select array[...]::text[] ...)` lists it uses for one-to-many
// selections. The S2 floor builds its JSON from this, so it keeps working
// when the service's SQL changes shape (columns in another order, a join
// instead of a function).

export interface ColumnRef {
  /** Table alias without the underscores, e.g. "orders", "order_items", "coffee_by_id". */
  alias: string;
  column: string;
}

export interface SelectColumn {
  ref: ColumnRef | null;
  /** For array(select array[...]) columns: the element layout. */
  elements?: Array<ColumnRef | null>;
}

/** Calls `at(i)` for each character of `s` outside quotes and brackets; stops when it returns true. */
function topLevel(s: string, at: (i: number) => boolean | void): void {
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (quote)
      quote = ch === quote ? null : quote; // a doubled quote closes and reopens
    else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "(" || ch === "[") depth++;
    else if (ch === ")" || ch === "]") depth--;
    else if (depth === 0 && at(i)) return;
  }
}

function splitTopLevel(s: string): string[] {
  const cuts = [-1];
  topLevel(s, (i) => void (s[i] === "," && cuts.push(i)));
  return cuts.map((c, k) => s.slice(c + 1, cuts[k + 1] ?? s.length).trim()).filter(Boolean);
}

const refOf = (expr: string): ColumnRef | null => {
  const m = /__([a-z0-9_]+?)__\."([a-z0-9_]+)"/i.exec(expr);
  return m ? { alias: m[1]!, column: m[2]! } : null;
};

/** The select list of the outermost SELECT of `sql`, in order. */
export function selectLayout(sql: string): SelectColumn[] {
  const text = sql.trim();
  if (!/^select\s/i.test(text)) return [];
  let end = text.length;
  topLevel(text, (i) => i > 6 && /^\sfrom\s/i.test(text.slice(i - 1, i + 5)) && ((end = i), true));
  return splitTopLevel(text.slice(6, end)).map((item) => {
    const expr = item.replace(/\sas\s+"\d+"\s*$/i, "");
    const arr = /^array\s*\(\s*select\s+array\s*\[/i.exec(expr);
    if (!arr) return { ref: refOf(expr) };
    let depth = 1;
    let i = arr[0].length;
    for (; i < expr.length && depth > 0; i++) depth += expr[i] === "[" ? 1 : expr[i] === "]" ? -1 : 0;
    return { ref: null, elements: splitTopLevel(expr.slice(arr[0].length, i - 1)).map(refOf) };
  });
}

/** The position of the column `column` of a table aliased as one of `aliases`. */
export const findColumn = (layout: SelectColumn[], src: { aliases: string[]; column: string }) => layout.findIndex((c) => c.ref && src.aliases.includes(c.ref.alias) && c.ref.column === src.column);

/** The position of the first array column with an element from a table whose alias passes `aliasTest`. */
export const findArray = (layout: SelectColumn[], aliasTest: (alias: string) => boolean) => layout.findIndex((c) => c.elements?.some((e) => e && aliasTest(e.alias)));
