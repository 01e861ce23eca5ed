/** Page ranges: pages and ranges separated by commas ("1-3,5"; "2-" is page 2 to the end). */
export const PAGE_RANGES_PATTERN =
  '^ *[1-9][0-9]{0,4}( *- *([1-9][0-9]{0,4})?)?( *, *[1-9][0-9]{0,4}( *- *([1-9][0-9]{0,4})?)?)* *$'
