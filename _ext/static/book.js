// The book's own behaviour on the site (added by _ext/offline_assets.py after the themes' scripts).
//
// 1. Every sidebar toggle works, on phones and on desktops.
//
// pydata-sphinx-theme 0.17 and sphinx-book-theme bind their open/close handlers to the first
// element matching `.primary-toggle` (and `.secondary-toggle`): the navbar's button, which
// sphinx-book-theme hides. The header button a reader actually sees ("Toggle primary
// sidebar", and the contents icon) then only shows its tooltip (upstream
// pydata/pydata-sphinx-theme#2451). Here every other toggle forwards its click to the bound
// one, so the themes' own code opens the drawer (narrow screens) or collapses the sidebar
// (wide ones).
(function () {
  function forward(selector) {
    var all = document.querySelectorAll(selector);
    if (all.length < 2) return;
    var bound = all[0];
    Array.prototype.slice.call(all, 1).forEach(function (button) {
      button.addEventListener("click", function (event) {
        event.preventDefault();
        event.stopPropagation();
        button.blur();
        bound.click();
      });
    });
  }
  // 2. Animations respect the reader's "reduce motion" setting: they start paused (a click on
  //    one still plays it, as the figure's own handler toggles it).
  function respectReducedMotion() {
    if (!window.matchMedia || !window.matchMedia("(prefers-reduced-motion: reduce)").matches) return;
    document.querySelectorAll("figure.book-anim svg").forEach(function (svg) {
      if (svg.pauseAnimations) svg.pauseAnimations();
    });
  }
  // 3. Glossary terms show their definition on a tap, not only as a hover title (touch screens
  //    never show titles): the first tap opens a small box under the term with the definition
  //    and a link to the glossary; a second tap on the term follows the link.
  function glossaryTaps() {
    var open = null;
    function close() { if (open) { open.box.remove(); open = null; } }
    document.querySelectorAll("article a:has(.std-term)[title]").forEach(function (link) {
      link.addEventListener("click", function (event) {
        if (open && open.link === link) { close(); return; }  // second tap: follow the link
        if (event.pointerType !== "touch") return;  // a mouse shows the title and follows
        event.preventDefault();
        close();
        var box = document.createElement("span");
        box.className = "book-term-box";
        box.setAttribute("role", "note");
        box.textContent = link.title + " ";
        var more = document.createElement("a");
        more.href = link.href;
        more.textContent = "Glossary";
        box.appendChild(more);
        link.insertAdjacentElement("afterend", box);
        open = {link: link, box: box};
      });
    });
    document.addEventListener("click", function (event) {
      if (open && !open.box.contains(event.target) && event.target.closest("a") !== open.link) close();
    });
    document.addEventListener("keydown", function (event) { if (event.key === "Escape") close(); });
  }
  function init() {
    forward(".primary-toggle");
    forward(".secondary-toggle");
    respectReducedMotion();
    glossaryTaps();
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
