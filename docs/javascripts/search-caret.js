// Search for "pass^k", the benchmark's headline figure.
//
// The theme's search engine (lunr, in the theme's search worker) reads "^" in a query as a boost: "pass^k"
// is "pass" boosted by "k", an error, and the search found nothing. The index keeps "pass^k" as one word
// (the search separator splits at spaces and hyphens only), so the query must too. The worker reads a query
// twice (the theme's clean-up, then lunr), each taking one level of backslash escapes: a caret inside a
// word goes to the worker escaped for both ("\\\^"), and reaches lunr as part of the word.
(function () {
  const QUERY = 2;  // the theme's SearchMessageType.QUERY: SETUP, READY, QUERY, RESULT
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (message, ...rest) {
    if (message && message.type === QUERY && typeof message.data === "string") {
      message = Object.assign({}, message, {data: message.data.replace(/(\S)\^(?=\S)/g, "$1\\\\\\^")});
    }
    return post.call(this, message, ...rest);
  };
})();
