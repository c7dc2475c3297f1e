/* The search page (tools/site/conf.py adds this file to it only).

   Excerpts, from a local folder as from a server. Sphinx's search fetches each result's page to
   cut an excerpt from it; browsers refuse fetch() for file:// addresses (an error per result, no
   excerpt). This page answers those requests itself with the pages' text, which tools/site.py
   writes to search-texts.js beside this file (the article only, without the on-page contents
   that the excerpt would otherwise often show); it is loaded on the first request. Any other
   request is the browser's. */
(() => {
  const here = document.currentScript.src;
  let texts = null;
  const load = () =>
    (texts ??= new Promise((resolve) => {
      const script = document.createElement("script");
      script.src = new URL("search-texts.js", here).href;
      script.onload = () => resolve(window.SITE_SEARCH_TEXTS || {});
      script.onerror = () => resolve({});
      document.head.appendChild(script);
    }));
  const edition = new URL("../", here).href;
  const browserFetch = window.fetch.bind(window);
  window.fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input, location.href);
    const page = url.href.startsWith(edition) && url.pathname.match(/([^/]+)\.html$/);
    if (!page) return browserFetch(input, init);
    const name = decodeURIComponent(page[1]);
    return load().then(
      (all) => new Response(all[name] || "", { headers: { "Content-Type": "text/html" } }),
    );
  };

  /* The line that ends a search: Sphinx 8.2's catalogues lack it in Chinese (the page showed it
     in English) and have it empty in Japanese (the page showed nothing). */
  const finished = {
    zh: "搜索完成，找到 ${resultCount} 个匹配的页面。",
    ja: "検索が完了しました。${resultCount} 件のページが見つかりました。",
  }[document.documentElement.lang.slice(0, 2)];
  const key = "Search finished, found one page matching the search query.";
  if (finished && typeof Documentation !== "undefined") {
    const known = Documentation.TRANSLATIONS[key];
    if (!(Array.isArray(known) ? known[0] : known)) Documentation.TRANSLATIONS[key] = [finished];
  }
})();
