// @jupyter-widgets/html-manager typesets widget labels with MathJax 2's MathJax.Hub.Queue;
// the book ships MathJax 3. Map the old call onto MathJax 3's typesetPromise. This listener is
// registered before the widget manager's own "load" listener, so it runs first.
window.addEventListener("load", function () {
  var mj = window.MathJax;
  if (mj && !mj.Hub) {
    mj.Hub = {
      Queue: function (job) {
        var el = job && job[2];
        if (mj.typesetPromise) { mj.typesetPromise(el ? [el] : undefined).catch(function () {}); }
      },
    };
  }
});
