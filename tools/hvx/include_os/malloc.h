/* hexnn-import stand-in for <malloc.h>: memalign (see stdlib.h here). */
#include <stdlib.h>
