// MathJax 3 settings for pymdownx.arithmatex (generic mode). The MathJax file itself is
// vendored beside this one (vendor/mathjax/tex-svg-full.js, from the npm package
// mathjax@3.2.2, Apache-2.0): no CDN. SVG output needs no font files; the menu is off, so
// nothing is ever loaded from elsewhere.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true,
  },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "arithmatex",
    enableMenu: false,
  },
};
