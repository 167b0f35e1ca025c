/* CSV output of the analyses (efipt top, efipt diff). */
#ifndef EFIPT_HOST_CSV_OUT_H
#define EFIPT_HOST_CSV_OUT_H

/* s as one quoted CSV field on stdout ("" doubled); control characters
 * escaped as text (term_safe()). */
void csv_field(const char *s);

#endif
