package legacy

// ParseBodyGjson exports the reference reading to the external benchmark,
// which lives outside the package so it can render pages with the
// reference backend (that package imports this one).
var ParseBodyGjson = parseBodyGjson
