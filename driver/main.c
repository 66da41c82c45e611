/*
 * main.c - the madsweep executable: forwards to cmd_main().
 */
#include <stdio.h>

#include "cmd.h"

int main(int argc, char **argv)
{
    return cmd_main(argc, argv, stdout, stderr);
}
