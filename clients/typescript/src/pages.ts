/** Yields the items of every page, from cursor on, until a page names no next one. */
export async function* pages<T>(
  cursor: string | undefined,
  page: (cursor: string | undefined) => Promise<{ items: T[]; next?: string }>,
): AsyncGenerator<T> {
  for (;;) {
    const { items, next } = await page(cursor);
    yield* items;
    if (!next) return;
    cursor = next;
  }
}
