/**
 * The edition the tests run the house with, as the node files install it: the full edition.
 * Tests that call a part of the house (the transport, a memory) without loading a node file need
 * it installed too; a test of the verified edition's parts installs that one itself.
 */
import { EDITION } from '../../nodes/edition/edition';
import { useEdition } from '../../nodes/shared/ports';

useEdition(EDITION);
